"""Context-governance figures, measured side by side in one run (prints; not a test).

1. Building the model's view (``load_view``) costs the visible window, not the history: a
   session of 100,000 messages with 50 compactions against one of 1,000 messages and none,
   on the DuckDB store and on the memory store. Sessions are written straight through
   ``store.write`` in batches.
2. Tokens sent per model call across a scripted 200-turn session (real litellm → the fake
   model server), with compaction and without: the per-call curve is saved as a PNG in
   ``benchmarks/out/`` and the totals are printed. Tokens are counted as
   ``len(json of the request's messages and tools) / 4``.

    python benchmarks/bench_context.py [--turns 200] [--messages 100000]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from _small import HELP  # noqa: E402 — benchmarks/ is the script's folder

from forge_jupyter import Forge, llm  # noqa: E402
from forge_jupyter.message import (  # noqa: E402
    CompactionPart,
    Message,
    SessionInfo,
    StepFinishPart,
    TextPart,
    Tokens,
    now,
)
from forge_jupyter.session.compaction import SUMMARY_INSTRUCTIONS  # noqa: E402
from forge_jupyter.session.retry import RetryPolicy  # noqa: E402
from forge_jupyter.session.view import load_view  # noqa: E402
from forge_jupyter.store.base import Store  # noqa: E402
from forge_jupyter.store.duckdb.store import DuckDBStore  # noqa: E402
from forge_jupyter.store.inmemory.store import MemoryStore  # noqa: E402
from forge_jupyter.store.ops import AppendMessage, PutMessage, PutPart  # noqa: E402
from forge_jupyter.testing import FakeModelServer, Turn, text, tool_call  # noqa: E402

OUT = Path(__file__).parent / "out"
PARAGRAPH = "The quick brown fox jumps over the lazy dog. " * 4


# ------------------------------------------------------------------ 1. view build time


def _message(sid: str, role: str, body: str, **kw) -> Message:
    m = Message(session_id=sid, role=role, status="completed", completed_at=now(),
                finish="stop" if role == "assistant" else None, **kw)
    m.parts = [TextPart(session_id=sid, message_id=m.id, text=body, time_start=now(), time_end=now())]
    if role == "assistant":
        m.parts.append(StepFinishPart(session_id=sid, message_id=m.id, reason="stop",
                                      tokens=Tokens(input=900, output=60)))
    return m


def write_session(store: Store, n: int, compactions: int, *, batch: int = 5_000,
                  window: int = 1_000) -> tuple[str, int]:
    """A session of ``n`` messages (±1) whose ``compactions`` boundaries are spread over the
    history, the last ``window`` messages from the end, each keeping a two-turn tail.
    Returns (session id, messages in the model's view)."""
    sid = store.create_session(SessionInfo(name=f"bench-{n}-{compactions}")).id
    last = n - window
    spots = sorted(last - k * (last // compactions) for k in range(compactions)) if compactions else []
    ops: list = []
    recent: list[Message] = []  # the last plain messages: a tail starts 4 back (two turns)
    written, i = 0, 0
    pending_user: Message | None = None
    while written < n:
        if spots and written >= spots[0] and pending_user is None and len(recent) >= 4:
            spots.pop(0)
            ask = Message(session_id=sid, role="user", status="completed", completed_at=now())
            ask.parts = [CompactionPart(session_id=sid, message_id=ask.id, auto=True,
                                        reason="context overflow", tail_start=recent[-4].id)]
            summary = _message(sid, "assistant", "## Goal\n" + PARAGRAPH, parent_id=ask.id,
                               summary=True)
            messages = [ask, summary]
        elif pending_user is None:
            pending_user = _message(sid, "user", f"question {i}: {PARAGRAPH}")
            messages = [pending_user]
            recent.append(pending_user)
        else:
            messages = [_message(sid, "assistant", f"answer {i}: {PARAGRAPH}",
                                 parent_id=pending_user.id)]
            recent.append(messages[0])
            pending_user, i = None, i + 1
        recent = recent[-4:]
        for m in messages:
            ops += [PutMessage(m.row()), *(PutPart(p) for p in m.parts), AppendMessage(sid, m.id)]
        written += len(messages)
        if len(ops) >= batch * 3:
            store.write(ops)
            ops = []
    if ops:
        store.write(ops)
    view, _start = load_view(store, sid)
    return sid, len(view)


def time_view(store: Store, sid: str, runs: int) -> float:
    """Median seconds of ``load_view``, the garbage collector off while timing (as timeit
    does: a full collection walks every live object, and the big store has many)."""
    load_view(store, sid)  # warm
    samples = []
    gc.collect()
    gc.disable()
    try:
        for _ in range(runs):
            t = time.perf_counter()
            load_view(store, sid)
            samples.append(time.perf_counter() - t)
    finally:
        gc.enable()
    return statistics.median(samples)


def bench_views(folder: Path, big: int, runs: int) -> None:
    print(f"\n== model-view build time (load_view, median of {runs})")
    print(f"{'store':<8} {'session':<32} {'timeline':>9} {'visible':>8} {'ms':>8} "
          f"{'µs/visible msg':>15}")
    for kind in ("duckdb", "memory"):
        store: Store = DuckDBStore(folder / "views.duckdb") if kind == "duckdb" else MemoryStore()
        t0 = time.perf_counter()
        sid_big, vis_big = write_session(store, big, 50)
        sid_small, vis_small = write_session(store, 1_000, 0)
        wrote = time.perf_counter() - t0
        results = {}
        for label, sid, visible in ((f"{big:,} msgs, 50 compactions", sid_big, vis_big),
                                    ("1,000 msgs, no compaction", sid_small, vis_small)):
            seconds = time_view(store, sid, runs)
            results[label] = seconds
            print(f"{kind:<8} {label:<32} {store.timeline_length(sid):>9,} {visible:>8,} "
                  f"{seconds * 1e3:>8.1f} {seconds / visible * 1e6:>15.1f}")
        a, b = results.values()
        t = time.perf_counter()
        everything = sum(1 for _ in store.iter_timeline(sid_big, page_size=2_000))
        whole = time.perf_counter() - t
        print(f"{kind:<8} ratio big/small: {a / b:.2f}×   (for scale: reading all {everything:,} "
              f"messages of the big one takes {whole * 1e3:,.0f} ms; sessions written in "
              f"{wrote:.1f} s)")
        store.close()


# ------------------------------------------------------------------ 2. tokens per call


def _responder(request) -> Turn:
    """The scripted model: summarize when asked, call a tool every fourth turn, else answer."""
    last = request.messages[-1]
    content = last.get("content") or ""
    if isinstance(content, str) and content.startswith(SUMMARY_INSTRUCTIONS[:60]):
        return Turn([text("## Goal\nAnalyse the tables.\n## Decisions\n" + PARAGRAPH, chunk=512)])
    if last["role"] == "user" and "[tool turn]" in content:
        return Turn([tool_call("lookup", {"table": content[:12]})])
    n = len(request.messages)
    return Turn([text(f"Answer {n}: " + " ".join(f"w{n}-{k}" for k in range(250)), chunk=512)])


def tokens(request) -> int:
    return len(json.dumps([request.body.get("messages"), request.body.get("tools")])) // 4


def scripted_session(turns: int, char_budget: int) -> tuple[list[int], list[bool], float]:
    with FakeModelServer() as server:
        for _ in range(turns * 4):
            server.add(_responder)
        forge = Forge(db=":memory:", **server.model_kwargs("openai"), builtin_tools=False,
                      char_budget=char_budget, retry=RetryPolicy(max_attempts=2, base_delay=0.01))

        @forge.tool
        def lookup(table: str) -> str:
            """Describe a table."""
            return "\n".join(f"{table} row {i}: {PARAGRAPH}" for i in range(16))  # ~3,000 chars

        session = forge.session("bench")
        t = time.perf_counter()
        for i in range(turns):
            tag = " [tool turn]" if i % 4 == 3 else ""
            session.prompt(f"Turn {i}{tag}: look at the next table and tell me what changed. "
                           + PARAGRAPH)
        elapsed = time.perf_counter() - t
        requests = server.requests
        sizes = [tokens(r) for r in requests]
        summarizing = [bool(r.messages) and str(r.messages[-1].get("content") or "")
                       .startswith(SUMMARY_INSTRUCTIONS[:60]) for r in requests]
        forge.close()
    return sizes, summarizing, elapsed


def bench_tokens(turns: int, plot: bool = True) -> None:
    print(f"\n== tokens sent per model call, {turns}-turn scripted session (len(json)/4)")
    llm.litellm()  # its import (seconds) is not part of either run
    with_c, summ, t_with = scripted_session(turns, char_budget=40_000)
    without, _, t_without = scripted_session(turns, char_budget=10**10)
    n_comp = sum(summ)
    print(f"{'':<20} {'calls':>6} {'total tokens':>14} {'max/call':>9} {'last call':>10} "
          f"{'compactions':>12} {'wall s':>7}")
    print(f"{'with compaction':<20} {len(with_c):>6} {sum(with_c):>14,} {max(with_c):>9,} "
          f"{with_c[-1]:>10,} {n_comp:>12} {t_with:>7.1f}")
    print(f"{'without':<20} {len(without):>6} {sum(without):>14,} {max(without):>9,} "
          f"{without[-1]:>10,} {0:>12} {t_without:>7.1f}")
    print(f"total tokens with / without: {sum(with_c) / sum(without):.3f}  "
          f"(summarizing calls alone: {sum(s for s, f in zip(with_c, summ, strict=True) if f):,})")
    if not plot:  # --small: no file written
        return

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    OUT.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(10, 5))
    ax.plot(range(len(without)), without, label=f"without compaction (total {sum(without):,})",
            color="tab:red")
    ax.plot(range(len(with_c)), with_c, label=f"with compaction (total {sum(with_c):,})",
            color="tab:blue")
    xs = [i for i, f in enumerate(summ) if f]
    ax.scatter(xs, [with_c[i] for i in xs], color="tab:blue", marker="v", zorder=3,
               label=f"summarizing calls ({n_comp})")
    ax.set_xlabel("model call")
    ax.set_ylabel("tokens sent (len(json)/4)")
    ax.set_title(f"Tokens per model call, {turns}-turn scripted session")
    ax.legend()
    fig.tight_layout()
    path = OUT / "context_tokens_per_call.png"
    fig.savefig(path, dpi=110)
    print(f"plot: {path}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--skip-views", action="store_true")
    parser.add_argument("--skip-tokens", action="store_true")
    parser.add_argument("--small", action="store_true", help=HELP)
    args = parser.parse_args(argv)
    if args.small:
        args.turns, args.messages, args.runs = 4, 2_000, 2
    with tempfile.TemporaryDirectory() as tmp:
        if not args.skip_views:
            bench_views(Path(tmp), args.messages, args.runs)
    if not args.skip_tokens:
        bench_tokens(args.turns, plot=not args.small)


if __name__ == "__main__":
    sys.exit(main())
