"""The end of a ``%%forge`` cell in a long session against a new one (issue 12, item 2).

A real kernel (text mode) runs ``%%forge`` cells against the fake model server, alternately in
a new session and in a session whose timeline holds 10,000 messages (5,000 turns, compacted
at the end, so the model's view is as short as the new session's). At its end a cell replaces
its live view with the record of its turn, read from the store (``magics._turn``): that read
is timed inside the kernel, and each cell from the client, execute to idle.

Side by side: the cell-end read as it is now (``session.view.load_turn``: the turn only) and as
it was before (``Session.messages()``: the whole session, then the turn sliced out — run on
today's reads, which are themselves faster than before). Target: a cell in the long session
ends as fast as in the new one, ratio ≤ 1.2. Not part of the test run.

    python benchmarks/bench_cell_end.py [--messages 10000] [--cells 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "notebook"))

from _small import HELP  # noqa: E402
from nb_kernel import forge_kernel  # noqa: E402

from forge_jupyter.message import (  # noqa: E402
    CompactionPart,
    Message,
    SessionInfo,
    StepFinishPart,
    StepStartPart,
    TextPart,
    Tokens,
    now,
)
from forge_jupyter.store.duckdb.store import DuckDBStore  # noqa: E402
from forge_jupyter.store.ops import AppendMessage, PutMessage, PutPart  # noqa: E402
from forge_jupyter.testing import FakeModelServer, Turn  # noqa: E402

TEXT = "The quick brown fox jumps over the lazy dog. " * 6

# In the kernel: time every cell-end read, and the way it was read before, to swap in.
TIMING = """
import time as _time
import forge_jupyter.notebook.magics as _magics
_now_turn = _magics._turn
_read_times = []

def _before_turn(session, user_message_id=None):
    messages = session.messages()
    if user_message_id is None:
        users = [i for i, m in enumerate(messages) if m.role == "user"]
        start = users[-1] if users else 0
    else:
        start = next((i for i, m in enumerate(messages) if m.id == user_message_id), 0)
    return messages[start:]

def _timed(read):
    def turn(*args, **kwargs):
        t = _time.perf_counter()
        try:
            return read(*args, **kwargs)
        finally:
            _read_times.append(_time.perf_counter() - t)
    return turn
"""


def build(path: Path, count: int) -> None:
    """A session named "long": ``count`` messages, a compaction boundary as the last two."""
    store = DuckDBStore(path)
    session = store.create_session(SessionInfo(name="long"))
    sid = session.id
    with store.hold():
        for first in range(0, count - 2, 2000):
            ops: list = []
            for i in range(first, min(count - 2, first + 2000)):
                m = Message(session_id=sid, role="user" if i % 2 == 0 else "assistant",
                            status="completed", completed_at=now(), finish="stop")
                parts = [TextPart(session_id=sid, message_id=m.id, text=f"{i} {TEXT}",
                                  time_start=now(), time_end=now())]
                if m.role == "assistant":
                    parts = [StepStartPart(session_id=sid, message_id=m.id), *parts,
                             StepFinishPart(session_id=sid, message_id=m.id, reason="stop",
                                            tokens=Tokens(input=1200, output=80), cost=0.001)]
                ops += [PutMessage(m), *(PutPart(p) for p in parts), AppendMessage(sid, m.id)]
            store.write(ops)
        ask = Message(session_id=sid, role="user", status="completed", completed_at=now())
        summary = Message(session_id=sid, role="assistant", parent_id=ask.id, summary=True,
                          status="completed", finish="stop", completed_at=now())
        store.write([
            PutMessage(ask), PutPart(CompactionPart(session_id=sid, message_id=ask.id)),
            AppendMessage(sid, ask.id), PutMessage(summary),
            PutPart(TextPart(session_id=sid, message_id=summary.id, text="## Goal\nread",
                             time_start=now(), time_end=now())),
            PutPart(StepFinishPart(session_id=sid, message_id=summary.id, reason="stop",
                                   tokens=Tokens(input=500, output=40))),
            AppendMessage(sid, summary.id),
        ])
    assert store.timeline_length(sid) == count


def run_cells(server: FakeModelServer, root: Path, cells: int) -> dict[str, dict[str, float]]:
    kernel = forge_kernel(server.openai_base, root)
    try:
        assert kernel.run(TIMING).status == "ok"
        server.add(Turn.text("ready"))
        assert kernel.run("%%forge --new -s fresh\nhello").status == "ok"  # warm: litellm loaded
        figures: dict[str, dict[str, float]] = {}
        for way in ("before", "now"):
            read = "_before_turn" if way == "before" else "_now_turn"
            assert kernel.run(f"_magics._turn = _timed({read})").status == "ok"
            times: dict[str, list[float]] = {"fresh": [], "long": []}
            reads: dict[str, list[float]] = {"fresh": [], "long": []}
            for i in range(cells):
                for name in ("fresh", "long"):  # alternated: the machine's load moves
                    server.add(Turn.text(f"answer {i}"))
                    t = time.monotonic()
                    r = kernel.run(f"%%forge -s {name}\nquestion {i}")
                    times[name].append(time.monotonic() - t)
                    assert r.status == "ok", r.text
                    reads[name].append(json.loads(kernel.run(
                        "print(_read_times[-1])").stdout))
            for name in ("fresh", "long"):
                figures[f"{way} {name}"] = {"cell": statistics.median(times[name]),
                                           "read": statistics.median(reads[name])}
        return figures
    finally:
        kernel.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--cells", type=int, default=5)
    parser.add_argument("--small", action="store_true", help=HELP)
    args = parser.parse_args()
    if args.small:
        args.messages, args.cells = 300, 1
    with FakeModelServer() as server, tempfile.TemporaryDirectory(prefix="bench-cell-") as tmp:
        root = Path(tmp)
        t = time.perf_counter()
        build(root / "forge.duckdb", args.messages)
        print(f"# bench_cell_end — a {args.messages:,}-message session built in "
              f"{time.perf_counter() - t:.1f} s; {args.cells} cells each, medians\n")
        figures = run_cells(server, root, args.cells)
    print(f"{'cell-end read':<34}{'new session':>14}{'long session':>15}{'long/new':>10}")
    for way, label in (("before", "whole session (before)"), ("now", "the turn only (now)")):
        fresh, long = figures[f"{way} fresh"], figures[f"{way} long"]
        print(f"{label + ': read':<34}{fresh['read'] * 1e3:>11.1f} ms{long['read'] * 1e3:>12.1f} ms"
              f"{long['read'] / fresh['read']:>9.1f}x")
        print(f"{label + ': whole cell':<34}{fresh['cell'] * 1e3:>11.0f} ms"
              f"{long['cell'] * 1e3:>12.0f} ms{long['cell'] / fresh['cell']:>9.2f}x"
              f"{'   (target ≤ 1.2)' if way == 'now' else ''}")


if __name__ == "__main__":
    main()
