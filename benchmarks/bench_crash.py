"""Kill trials: SIGKILL a runner at random points of streamed turns with tool calls (issue 10).

    .venv/bin/python benchmarks/bench_crash.py [--trials 20] [--before 10] [--seed 7]

Each trial: a child process runs a prompt on a shared DuckDB file against the fake model server
of this process — reasoning and text streamed over ~1.5 s, a tool call to a slow tool
(0.6 s), then ~1.5 s more text after the tool result — and is SIGKILLed at a random moment of
that turn. This process then opens the same file and sends a follow-up prompt to the same
session. Counted: sessions recovered (the dead run's message closed as ``interrupted``, nothing
left open), follow-up prompts that worked at once (no SessionBusy, so no wait for the 60 s
lease), parts left open, and characters of streamed text kept in the store against those the
child had received before the kill (what its widget had shown).

``--before N`` runs N more trials with the text checkpoints switched off (the behaviour before
issue 10, item 8), side by side. Children are forked by a single-threaded "zygote" process that
imported litellm and forge_jupyter once, so a trial costs its turn, not an interpreter start.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from _small import HELP  # noqa: E402 — benchmarks/ is the script's folder

from forge_jupyter import Forge, llm  # noqa: E402
from forge_jupyter.bus import PartDelta, PartUpdated  # noqa: E402
from forge_jupyter.errors import SessionBusy  # noqa: E402
from forge_jupyter.session import checkpoints as durable  # noqa: E402
from forge_jupyter.testing import FakeModelServer, Turn, reasoning, text, tool_call  # noqa: E402

THOUGHT = "".join(f"step{i} " for i in range(80))  # ~520 characters, 65 pieces: ~0.6 s
ANSWER = "".join(f"word{i} " for i in range(250))  # ~1,740 characters, 218 pieces: ~1.8 s
AFTER = "".join(f"more{i} " for i in range(250))  # ~1,740 characters, 218 pieces: ~1.8 s
PIECE, GAP = 8, 0.008  # characters per streamed piece, seconds between pieces
TURN_SECONDS = 5.0  # reasoning, text, a 0.6 s tool, text; plus the overheads of two requests

llm.litellm()  # imported once here: in this process and in the zygote its children fork from


def slow(seconds: float) -> str:
    """Wait that many seconds, then say so.

    seconds: how long to wait
    """
    time.sleep(seconds)
    return f"waited {seconds} s"


# ------------------------------------------------------------------------------ the child


def child(db: str, api_base: str, session: str, log_path: str, checkpoints: bool) -> None:
    """Run the prompt; log every streamed fragment and part row it saw (one JSON line each)."""
    if not checkpoints:
        durable.CHECKPOINT_EVERY = None
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)

    def note(e: object) -> None:
        if isinstance(e, PartDelta) and e.field == "text":
            entry = {"p": e.part_id, "t": e.delta, "at": time.time()}
            os.write(log, (json.dumps(entry) + "\n").encode())
        elif isinstance(e, PartUpdated) and e.part.type == "tool":
            os.write(log, (json.dumps({"tool": e.part.state}) + "\n").encode())

    forge = Forge(db=db, model="openai/fake-model", api_base=api_base, api_key="sk-fake",
                  builtin_tools=False, tools=[slow])
    forge.bus.subscribe(note)
    forge.session(session).prompt("go")
    os.write(log, b'{"done": true}\n')


def zygote() -> None:
    """Fork a child per request line (JSON arguments of ``child``); answer with its pid."""
    # What a first prompt loads (the tokenizer, litellm's lazy modules), loaded before forking;
    # nothing here starts a thread, so forking this process is safe.
    import anyio._backends._asyncio  # noqa: F401
    import litellm._service_logger  # noqa: F401

    llm.count_tokens("openai/fake-model", messages=[{"role": "user", "content": "warm up"}])
    assert threading.active_count() == 1
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # killed children are reaped by the kernel
    print("ready", flush=True)
    for line in sys.stdin:
        args = json.loads(line)
        pid = os.fork()
        if pid == 0:
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            code = 0
            try:
                child(**args)
            except BaseException:
                code = 1
            os._exit(code)
        print(pid, flush=True)


class Zygote:
    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, __file__, "--zygote"], text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self.proc.stdout.readline().strip() == "ready"

    def fork(self, **args: object) -> int:
        self.proc.stdin.write(json.dumps(args) + "\n")
        self.proc.stdin.flush()
        return int(self.proc.stdout.readline())

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(30)


def _gone(pid: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.005)


# ------------------------------------------------------------------------------ a trial


@dataclass
class Trial:
    checkpoints: bool
    killed_at: float  # seconds after the child's first model request
    phase: str = ""  # what the child was doing: reasoning, text, tool, text after the tool
    recovered: bool = False
    followed_up: bool = False  # the follow-up prompt answered, with no SessionBusy
    follow_up_s: float = 0.0
    taken_over: bool = False  # the dead lease taken over at once (an event says so)
    open_parts: int = 0
    received: int = 0  # characters of text and reasoning the child had received
    kept: int = 0  # of them, characters the store holds
    older: int = 0  # characters received more than a second before the kill
    older_lost: int = 0  # of them, characters the store does not hold
    start_s: float = 0.0  # from the fork to the child's first model request
    prefix_ok: bool = True  # every stored text is a prefix of what was received


def _received(log_path: str, cutoff: float) -> tuple[dict[str, str], str, dict[str, int]]:
    """What the child received, per part; its phase at the kill; per part, the characters it
    had received by ``cutoff``."""
    texts: dict[str, str] = {}
    older: dict[str, int] = {}
    phase = "before the first token"
    tool_state = None
    for line in Path(log_path).read_text().splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # a line cut by the kill
        if "p" in entry:
            texts[entry["p"]] = texts.get(entry["p"], "") + entry["t"]
            if entry["at"] <= cutoff:
                older[entry["p"]] = older.get(entry["p"], 0) + len(entry["t"])
            phase = "text after the tool" if tool_state else "streaming"
        elif "tool" in entry:
            tool_state = entry["tool"]
            phase = f"tool {tool_state}"
        elif entry.get("done"):
            phase = "finished"
    return texts, phase, older


def _turns() -> list[Turn]:
    first = Turn([reasoning(THOUGHT, chunk=PIECE), text(ANSWER, chunk=PIECE),
                  tool_call("slow", {"seconds": 0.6})], chunk_delay=GAP)
    return [first, Turn([text(AFTER, chunk=PIECE)], chunk_delay=GAP)]


def run_trial(n: int, trial: Trial, *, zygote: Zygote, server: FakeModelServer, parent: Forge,
              db: Path, tmp: Path) -> Trial:
    name = f"trial-{n}"
    log_path = str(tmp / f"{name}.log")
    server.clear()
    server.add(*_turns())
    seen = len(server.requests)
    pid = zygote.fork(db=str(db), api_base=server.openai_base, session=name,
                      log_path=log_path, checkpoints=trial.checkpoints)
    forked = time.monotonic()
    deadline = forked + 60
    while len(server.requests) <= seen and time.monotonic() < deadline:
        time.sleep(0.005)
    first = server.requests[seen].received_at
    trial.start_s = first - forked
    time.sleep(max(0.0, first + trial.killed_at - time.monotonic()))
    killed = time.time()
    os.kill(pid, signal.SIGKILL)
    _gone(pid)  # reaped by the zygote's kernel auto-reap
    texts, trial.phase, older = _received(log_path, killed - 1.0)

    server.clear()
    server.add(Turn.text("I am back."))
    session = parent.session(name)
    t = time.perf_counter()
    try:
        answer = session.prompt("Are you still there?")
        trial.followed_up = answer.text == "I am back."
    except SessionBusy:
        trial.followed_up = False
    trial.follow_up_s = time.perf_counter() - t
    store = parent.store
    trial.taken_over = bool(store.events(session.id, type="recovery.lease_taken_over").items)
    messages = session.messages()
    trial.recovered = trial.phase == "finished" or any(m.status == "interrupted" for m in messages)
    trial.open_parts = sum(1 for m in messages for p in m.parts if not p.is_terminal)
    trial.open_parts += len(store.unfinished_messages(session.id))
    stored = {p.id: p.text for m in messages for p in m.parts if p.id in texts}
    trial.received = sum(len(t.rstrip()) for t in texts.values())
    # trailing whitespace is trimmed from a finished block: count what could be kept
    old = {pid: min(n, len(texts[pid].rstrip())) for pid, n in older.items()}
    trial.older = sum(old.values())
    trial.older_lost = sum(max(0, n - len(stored.get(pid, ""))) for pid, n in old.items())
    trial.kept = sum(len(t) for t in stored.values())
    trial.prefix_ok = all(texts[pid].startswith(t) for pid, t in stored.items())
    return trial


# ------------------------------------------------------------------------------ the report


def _table(trials: list[Trial]) -> None:
    print(f"{'#':>3} {'ckpt':>5} {'kill s':>6}  {'phase':<22} {'recovered':>9} {'follow-up':>10} "
          f"{'taken over':>10} {'open':>4} {'received':>8} {'>1 s old':>8} {'kept':>6}")
    for i, t in enumerate(trials, 1):
        follow = f"{t.follow_up_s:.2f} s" if t.followed_up else "REFUSED"
        print(f"{i:>3} {'on' if t.checkpoints else 'off':>5} {t.killed_at:6.2f}  {t.phase:<22} "
              f"{'yes' if t.recovered else 'NO':>9} {follow:>10} "
              f"{'yes' if t.taken_over else '-':>10} {t.open_parts:>4} {t.received:>8} "
              f"{t.older:>8} {t.kept:>6}{'' if t.prefix_ok else '  (not a prefix!)'}")


def _summary(label: str, trials: list[Trial]) -> None:
    if not trials:
        return
    n = len(trials)
    streamed = [t for t in trials if t.received]
    lost_all = sum(1 for t in streamed if t.kept == 0)
    kept = sum(t.kept for t in trials)
    received = sum(t.received for t in trials)
    follow = [t.follow_up_s for t in trials if t.followed_up]
    older = sum(t.older for t in trials)
    older_lost = sum(t.older_lost for t in trials)
    print(f"{label}: {n} kills → sessions recovered {sum(t.recovered for t in trials)}/{n}; "
          f"follow-up worked at once {len(follow)}/{n} (median {statistics.median(follow or [0]):.2f} s,"
          f" max {max(follow or [0]):.2f} s; lease TTL 60 s); dead leases taken over "
          f"{sum(t.taken_over for t in trials)}; parts left open {sum(t.open_parts for t in trials)}; "
          f"streamed text kept {kept:,}/{received:,} characters "
          f"({kept / received if received else 1:.0%}); of the text older than 1 s at the kill, "
          f"lost {older_lost:,}/{older:,} characters; trials that lost all their streamed text "
          f"{lost_all}/{len(streamed)}; stored text not a prefix of the received "
          f"{sum(not t.prefix_ok for t in trials)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=20, help="kills with checkpoints on")
    parser.add_argument("--before", type=int, default=8,
                        help="extra kills with the checkpoints off (the behaviour before)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--zygote", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--small", action="store_true", help=HELP)
    args = parser.parse_args()
    if args.small:
        args.trials, args.before = 1, 1
    if args.zygote:
        return zygote()
    rng = random.Random(args.seed)
    plan = [Trial(True, rng.uniform(0.1, TURN_SECONDS)) for _ in range(args.trials)]
    plan += [Trial(False, rng.uniform(0.1, TURN_SECONDS)) for _ in range(args.before)]
    rng.shuffle(plan)  # interleaved, so load on the machine touches both alike
    started = time.perf_counter()
    forks = Zygote()
    with FakeModelServer() as server, tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        db = tmp / "crash.duckdb"
        parent = Forge(db=str(db), builtin_tools=False, tools=[slow],
                       **server.model_kwargs("openai"))
        server.add(Turn.text("warm"))
        parent.session("warm-up").prompt("first use of litellm and the file, not timed")
        done = [run_trial(i, t, zygote=forks, server=server, parent=parent, db=db, tmp=tmp)
                for i, t in enumerate(plan, 1)]
        parent.close()
    forks.close()
    _table(done)
    print()
    _summary("checkpoints on (now) ", [t for t in done if t.checkpoints])
    _summary("checkpoints off (before)", [t for t in done if not t.checkpoints])
    starts = [t.start_s for t in done]
    print(f"\n{len(done)} trials in {time.perf_counter() - started:.0f} s (fork to first request: "
          f"median {statistics.median(starts):.2f} s)")


if __name__ == "__main__":
    sys.exit(main())
