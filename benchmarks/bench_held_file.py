"""A DuckDB client holding the store open, against the file left free (prints; not a test).

Issue 29 item 2: a read-only connection kept open by another process (a DuckDB CLI session,
DBeaver, a ``duckdb.connect()`` in a cell) froze the agent — held 15 s, a 2 s prompt took
36 s. Side by side in one run, on one store (a session with ``--history`` earlier turns):

- a prompt through real litellm against the fake model server with the file free, and with
  a real DuckDB client process holding it read-only (the first held prompt pays for the
  pending copy, pending.py; the later ones work in it);
- how long the copy takes to land once the client lets go;
- a polling reader (connect, one query, close; ``--polls`` times) while forge writes: against
  the store itself, and against a ``forge-jupyter snapshot`` of it — "Conflicting lock" counts.

    python benchmarks/bench_held_file.py [--prompts 5] [--history 200] [--polls 43]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from _small import HELP  # noqa: E402 — benchmarks/ is the script's folder

from forge_jupyter import Forge  # noqa: E402
from forge_jupyter.store.duckdb.pending import StoreDiverted  # noqa: E402
from forge_jupyter.store.duckdb.snapshot import take_snapshot  # noqa: E402
from forge_jupyter.testing import FakeModelServer, Turn  # noqa: E402

warnings.simplefilter("ignore", StoreDiverted)


def _hold(path: Path) -> subprocess.Popen:
    code = (f"import duckdb, sys; c = duckdb.connect({str(path)!r}, read_only=True); "
            "print('held', flush=True); sys.stdin.readline(); c.close()")
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def _prompts(forge: Forge, server: FakeModelServer, n: int) -> list[float]:
    session = forge.session("bench")
    took = []
    for i in range(n):
        server.add(Turn.text(f"answer {i} " * 40))
        t = time.perf_counter()
        session.prompt(f"question {i}")
        took.append(time.perf_counter() - t)
    return took


def _poll(path: Path, n: int, stop: threading.Event) -> int:
    """Connect, query, close, ``n`` times; how many met a lock."""
    code = (
        "import duckdb, sys, time\n"
        "bad = 0\n"
        f"for _ in range({n}):\n"
        "    try:\n"
        f"        c = duckdb.connect({str(path)!r}, read_only=True)\n"
        "        c.execute('SELECT count(*) FROM part').fetchall(); c.close()\n"
        "    except duckdb.Error as e:\n"
        "        bad += 'lock' in str(e).lower()\n"
        "    time.sleep(0.01)\n"
        "print(bad)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    stop.set()
    return int(out.stdout.strip() or -1)


def _busy(forge: Forge, server: FakeModelServer, stop: threading.Event) -> None:
    session = forge.session("busy")
    while not stop.is_set():
        server.add(Turn.text("busy " * 100))
        session.prompt("keep writing")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prompts", type=int, default=5)
    ap.add_argument("--history", type=int, default=200)
    ap.add_argument("--polls", type=int, default=43)
    ap.add_argument("--small", action="store_true", help=HELP)
    a = ap.parse_args()
    if a.small:
        a.prompts, a.history, a.polls = 2, 3, 4
    with FakeModelServer() as server, tempfile.TemporaryDirectory(prefix="bench-held-") as tmp:
        path = Path(tmp) / "forge.duckdb"
        forge = Forge(db=str(path), builtin_tools=False, memory_dir=Path(tmp) / "memory",
                      **server.model_kwargs("openai"))
        try:
            _prompts(forge, server, a.history)
            free = _prompts(forge, server, a.prompts)
            holder = _hold(path)
            held = _prompts(forge, server, a.prompts)
            t = time.perf_counter()
            holder.communicate("\n", timeout=30)
            pending = path.with_name(path.name + ".pending")
            while pending.exists():
                time.sleep(0.01)
            landed = time.perf_counter() - t
            counts = {}
            snap = Path(tmp) / "look.duckdb"
            take_snapshot(path, snap)
            for name, target in (("the store", path), ("a snapshot", snap)):
                stop = threading.Event()
                writer = threading.Thread(target=_busy, args=(forge, server, stop))
                writer.start()
                counts[name] = _poll(target, a.polls, stop)
                writer.join()
        finally:
            forge.close()
    print(f"store: {a.history + 2 * a.prompts} turns; {a.prompts} prompts each way")
    print(f"prompt, file free:              median {statistics.median(free) * 1000:7.1f} ms")
    print(f"prompt, held by a DuckDB client: first {held[0] * 1000:7.1f} ms (makes the copy), "
          f"median {statistics.median(held) * 1000:7.1f} ms "
          f"({statistics.median(held) / statistics.median(free):.2f}x free)")
    print(f"the copy landed {landed * 1000:.0f} ms after the client let go (checked every 1 s)")
    for name, bad in counts.items():
        print(f"a polling reader of {name}: {bad} of {a.polls} tries met a lock")


if __name__ == "__main__":
    main()
