"""PostgreSQL store beside the DuckDB store on the same workload (prints; not a test).

A writer runs turns of ``--steps`` model steps; each step is one batch, one transaction (the
projection's flush): an assistant message's row and 4 parts (step start, text, tool call, step
finish), the message appended to the timeline at its first step and finished at its last.
Figures: parts/s persisted by 1 and by ``--writers`` concurrent processes (each its own
session), and the commit latency of one step's batch, p50 and p99. PostgreSQL runs in a
throwaway cluster (tests/pg_cluster.py: fsync off, synchronous_commit on); DuckDB in a file.

    python benchmarks/bench_postgres.py [--turns 4] [--steps 50] [--writers 8]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _small import HELP  # noqa: E402 — benchmarks/ is the script's folder

ROOT = Path(__file__).resolve().parents[1]


def writer(db: str, name: str, turns: int, steps: int) -> dict[str, float | list[float]]:
    from forge_jupyter.forge import open_store
    from forge_jupyter.message import (
        Message,
        SessionInfo,
        StepFinishPart,
        StepStartPart,
        TextPart,
        ToolPart,
        now,
    )
    from forge_jupyter.store.ops import AppendMessage, PutMessage, PutPart

    store = open_store(db, tenant="bench")
    session = store.create_session(SessionInfo(name=name))
    latencies: list[float] = []
    parts = 0
    started = time.perf_counter()
    for _ in range(turns):
        message = Message(session_id=session.id, role="assistant")
        for step in range(steps):
            last = step == steps - 1
            if last:
                message = message.model_copy(update={"status": "completed", "completed_at": now()})
            common = {"session_id": session.id, "message_id": message.id}
            ops = [PutMessage(message), PutPart(StepStartPart(**common)),
                   PutPart(TextPart(**common, text="x" * 200, time_end=now())),
                   PutPart(ToolPart(**common, call_id=f"c{step}", tool="python",
                                    state="completed", input={"code": "1+1"}, output="2")),
                   PutPart(StepFinishPart(**common))]
            if step == 0:
                ops.append(AppendMessage(session.id, message.id))
            t = time.perf_counter()
            store.write(ops)
            latencies.append(time.perf_counter() - t)
            parts += 4
    elapsed = time.perf_counter() - started
    store.close()
    return {"parts": parts, "seconds": elapsed, "latencies": latencies}


def run(db: str, writers: int, turns: int, steps: int) -> tuple[float, list[float]]:
    """Parts/s over all writers (wall clock) and every batch's latency."""
    code = ("import json, sys; sys.path[:0] = [sys.argv[1], sys.argv[1] + '/benchmarks']; "
            "from bench_postgres import writer; "
            "print(json.dumps(writer(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))))")
    started = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, "-c", code, str(ROOT), db, f"w{n}-{time.time_ns()}",
                               str(turns), str(steps)], stdout=subprocess.PIPE, text=True)
             for n in range(writers)]
    results = [json.loads(p.communicate()[0]) for p in procs]
    wall = time.perf_counter() - started
    return sum(r["parts"] for r in results) / wall, [x for r in results for x in r["latencies"]]


def pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1] * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=4)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--writers", type=int, default=8)
    ap.add_argument("--small", action="store_true", help=HELP)
    args = ap.parse_args()
    if args.small:
        args.turns, args.steps, args.writers = 1, 5, 2
    sys.path.insert(0, str(ROOT / "tests"))
    from pg_cluster import pg_cluster_running

    from forge_jupyter.store.postgres.schema import migrate

    with pg_cluster_running() as cluster, tempfile.TemporaryDirectory() as tmp:
        db = cluster.create_database("bench")
        app = db.create_app_role("bench_app")
        migrate(db.owner_dsn, (app.name,))
        targets = {"PostgreSQL": app.dsn, "DuckDB": str(Path(tmp) / "bench.duckdb")}
        print(f"load {os.getloadavg()[0]:.1f}; a turn = {args.steps} steps, a step = 1 batch "
              f"of 4 parts; {args.turns} turns per writer")
        print(f"{'store':<11} {'writers':>7} {'parts/s':>9} {'p50 ms':>8} {'p99 ms':>8}")
        for writers in (1, args.writers):
            for label, target in targets.items():
                rate, lat = run(target, writers, args.turns, args.steps)
                print(f"{label:<11} {writers:>7} {rate:>9.0f} {pct(lat, 50):>8.2f} "
                      f"{pct(lat, 99):>8.2f}")


if __name__ == "__main__":
    main()
