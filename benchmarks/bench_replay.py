"""Restart & Run All of a 10-turn notebook: live against replayed (issue 16).

A notebook of ten ``%%forge`` cells, each a turn of two model calls (a ``python`` call that
builds a variable, then an answer), runs headless through nbclient in a fresh kernel twice
against the fake model server with realistic delays (time to first byte, a streamed answer):
first live, then — the same notebook, a new kernel, as Restart & Run All — replayed from the
store. Side by side: wall time, model requests, cost. Not part of the test run.

    python benchmarks/bench_replay.py [--turns 10] [--first-byte 0.6] [--chunk-delay 0.02]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "notebook"))

from _small import HELP  # noqa: E402 — benchmarks/ is the script's folder
from replay_nb import notebook, run  # noqa: E402

from forge_jupyter import Forge  # noqa: E402
from forge_jupyter.testing import FakeModelServer, Turn, delay, text, tool_call  # noqa: E402

ANSWER = ("The table has {i} more rows than before; the column means moved a little, and the "
          "missing values are where they were. Nothing else changed in step {i}.")


def script(turns: int, first_byte: float, chunk_delay: float) -> list[Turn]:
    out = []
    for i in range(turns):
        out.append(Turn([delay(first_byte), text(f"Computing step {i}."),
                         tool_call("python", {"code": f"v{i} = sum(range({i} * 1000))\nv{i}"})],
                        chunk_delay=chunk_delay))
        out.append(Turn([delay(first_byte), text(ANSWER.format(i=i), chunk=4)],
                        chunk_delay=chunk_delay))
    return out


def cell_seconds(cell: Any) -> float:
    """Busy to idle of one executed cell (nbclient's timing metadata)."""
    e = cell.metadata["execution"]
    busy, idle = (datetime.fromisoformat(e[k].replace("Z", "+00:00"))
                  for k in ("iopub.status.busy", "iopub.status.idle"))
    return (idle - busy).total_seconds()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--turns", type=int, default=10)
    ap.add_argument("--first-byte", type=float, default=0.6, help="seconds before each response")
    ap.add_argument("--chunk-delay", type=float, default=0.02, help="seconds between stream events")
    ap.add_argument("--small", action="store_true", help=HELP)
    args = ap.parse_args()
    if args.small:
        args.turns, args.first_byte, args.chunk_delay = 2, 0.0, 0.0
    nb = notebook(*(f"%%forge\nStep {i}: build v{i}." for i in range(args.turns)),
                  "print(sum(v for k, v in globals().items() if k[:1] == 'v' and k[1:].isdigit()))")
    with tempfile.TemporaryDirectory() as tmp, FakeModelServer() as server:
        root = Path(tmp)
        server.add(*script(args.turns, args.first_byte, args.chunk_delay))
        figures = {}
        for label in ("live", "replay"):
            before = len(server.requests)
            start = time.perf_counter()
            done = run(nb, root, server.openai_base)
            wall = time.perf_counter() - start
            check = "".join(o.get("text", "") for o in done.cells[-1].outputs).strip()
            cells = [cell_seconds(c) for c in done.cells if c.source.startswith("%%forge")]
            figures[label] = (wall, len(server.requests) - before, check, cells)
        with Forge(db=str(root / "forge.duckdb")) as forge:
            costs = forge.costs(by="replayed").set_index("replayed")
    live_cost = float(costs.loc[False, "cost"]) if False in costs.index else 0.0
    replay_cost = float(costs.loc[True, "cost"]) if True in costs.index else 0.0
    (lw, lr, lc, lcells), (rw, rr, rc, rcells) = figures["live"], figures["replay"]
    lm, rm = statistics.median(lcells[1:]), statistics.median(rcells[1:])
    print(f"Run All of a {args.turns}-turn notebook (2 model calls a turn; first byte "
          f"{args.first_byte}s, {args.chunk_delay}s between stream events), nbclient, fresh kernel")
    print(f"{'':10}{'live':>12}{'replay':>12}{'ratio':>10}")
    print(f"{'wall s':10}{lw:>12.2f}{rw:>12.2f}{lw / rw:>9.1f}×")
    print(f"{'cell s':10}{lm:>12.3f}{rm:>12.3f}{lm / rm:>9.1f}×   (median %%forge cell after the first)")
    print(f"{'1st cell s':10}{lcells[0]:>12.2f}{rcells[0]:>12.2f}"
          "             (live: the kernel's whole warm-up; replay: its imports and store only)")
    print(f"{'requests':10}{lr:>12}{rr:>12}")
    print(f"{'cost $':10}{live_cost:>12.6f}{replay_cost:>12.6f}")
    print(f"same variables: {lc == rc} ({lc!r} / {rc!r})")


if __name__ == "__main__":
    main()
