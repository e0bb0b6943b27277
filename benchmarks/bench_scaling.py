"""A long session's cost curve: what each read costs at 1k, 10k and 50k messages (prints).

Issue 30, target 5: cell-end time, the side panel's history page and the DataFrame calls of
one session, at three sizes, so a read that grows faster than what it reads shows. Each size is
one DuckDB file holding one session of that many messages (bench_frames.py's bulk builder,
through the store's own row codec), read by what the product uses:

  - the cell's end (``session.view.load_turn``: the last turn, with its parts);
  - the side panel's history page (``HistoryReader.messages``: the last page of 50, with its
    compaction marks), as the server answers it;
  - ``history(session)``, ``context(session)``, ``costs(by="session")``, ``tool_calls(session)``.

Each figure is the best of ``--rounds``; the last columns are the 50k figure over the 1k one
(the data grew 50×): what reads one turn or one page should stay near 1×, what reads the whole
session near 50× at most.

    python benchmarks/bench_scaling.py [--sizes 1000 10000 50000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _small import HELP  # noqa: E402 — benchmarks/ is the script's folder
from bench_frames import PARTS_PER_TURN, build_duckdb  # noqa: E402

from forge_jupyter.forge import Forge  # noqa: E402
from forge_jupyter.server.reader import HistoryReader  # noqa: E402
from forge_jupyter.session.view import load_turn  # noqa: E402

SESSION = "ses_" + "0" * 26  # the builder's one session


def _best(fn: Callable[[], object], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def measure(path: Path, messages: int, rounds: int) -> dict[str, float]:
    build_duckdb(path, messages // 3 * PARTS_PER_TURN, sessions=1)
    forge = Forge(db=str(path), builtin_tools=False)
    reader = HistoryReader(path, "default")
    try:
        store = forge.store
        length = store.timeline_length(SESSION)
        reads: dict[str, Callable[[], object]] = {
            "cell end (last turn)": lambda: load_turn(store, SESSION),
            "panel history page": lambda: reader.messages(SESSION, max(0, length - 50), 50),
            "history(session)": lambda: forge.history(SESSION),
            "context(session)": lambda: forge.context(SESSION),
            "costs(by=session)": lambda: forge.costs(by="session"),
            "tool_calls(session)": lambda: forge.tool_calls(SESSION),
        }
        for fn in reads.values():
            fn()  # warm: imports, the first attach
        return {name: _best(fn, rounds) for name, fn in reads.items()}
    finally:
        reader.close()
        forge.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 50000])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--small", action="store_true", help=HELP)
    a = ap.parse_args()
    if a.small:
        a.sizes, a.rounds = [300, 900], 1
    figures: dict[int, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-scaling-") as tmp:
        for n in a.sizes:
            figures[n] = measure(Path(tmp) / f"s{n}.duckdb", n, a.rounds)
    first, last = a.sizes[0], a.sizes[-1]
    print(f"one session of N messages ({PARTS_PER_TURN} parts a turn of 3); best of "
          f"{a.rounds}, ms")
    print(f"{'read':24}" + "".join(f"{n:>10,}" for n in a.sizes) + f"   {last:,}/{first:,}")
    for name in figures[first]:
        row = "".join(f"{figures[n][name] * 1000:10.1f}" for n in a.sizes)
        print(f"{name:24}{row}   {figures[last][name] / figures[first][name]:6.1f}x")
    print(f"(the data grew {last / first:.0f}x)")


if __name__ == "__main__":
    main()
