"""Copy figures (forge_jupyter/copy.py), side by side in one run (prints; not a test).

A DuckDB file of ``--sessions`` sessions of ``--messages`` messages (3 text parts each) is
copied into a new DuckDB file and into a new PostgreSQL database (a throwaway cluster,
tests/pg_cluster.py): the whole copy (read, check, dry run, write, read back and compare) and
its check alone (``copy.plan``), with rows/s. Then the check against a destination already
holding SCAN_FACTOR + 1 times as many messages
(no parts), where ids are looked up one by one — the slow path.

    python benchmarks/bench_copy.py [--sessions 4] [--messages 500]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from forge_jupyter.copy import SCAN_FACTOR, copy_sessions, plan
from forge_jupyter.message import Message, SessionInfo, TextPart
from forge_jupyter.store.base import Store
from forge_jupyter.store.duckdb.store import DuckDBStore
from forge_jupyter.store.ops import AppendMessage, Op, PutMessage, PutPart

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from _small import HELP  # noqa: E402 — benchmarks/ is the script's folder
from pg_cluster import pg_cluster_running  # noqa: E402


def fill(store: Store, sessions: int, messages: int, prefix: str, parts: int = 3) -> int:
    for s in range(sessions):
        info = store.create_session(SessionInfo(name=f"{prefix}{s}"))
        ops: list[Op] = []
        for i in range(messages):
            m = Message(session_id=info.id, role="user" if i % 2 == 0 else "assistant",
                        status="completed")
            ops.append(PutMessage(m))
            ops.extend(PutPart(TextPart(session_id=info.id, message_id=m.id, text=f"text {i}.{j} " * 20))
                       for j in range(parts))
            ops.append(AppendMessage(info.id, m.id))
        store.write(ops)
    return sessions * messages * (1 + parts)


def timed(label: str, rows: int, fn) -> None:
    t = time.perf_counter()
    fn()
    took = time.perf_counter() - t
    print(f"  {label:<48} {took:7.2f} s  {rows / took:9.0f} rows/s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=4)
    parser.add_argument("--messages", type=int, default=500)
    parser.add_argument("--small", action="store_true", help=HELP)
    args = parser.parse_args()
    if args.small:
        args.sessions, args.messages = 2, 20
    tmp = Path(tempfile.mkdtemp(prefix="bench-copy-"))
    src = DuckDBStore(tmp / "src.duckdb")
    rows = fill(src, args.sessions, args.messages, "s")
    print(f"{args.sessions} sessions x {args.messages} messages x 3 parts = {rows} rows "
          f"(load {os.getloadavg()[0]:.1f})")
    with pg_cluster_running() as cluster:
        from forge_jupyter.store.postgres.schema import migrate
        from forge_jupyter.store.postgres.store import PostgresStore

        def postgres() -> Store:
            db = cluster.create_database()
            app = db.create_app_role()
            migrate(db.owner_dsn, (app.name,))
            return PostgresStore(app.dsn)

        n = 0

        def duckdb() -> Store:
            nonlocal n
            n += 1
            return DuckDBStore(tmp / f"dst{n}.duckdb")

        for name, make in (("DuckDB", duckdb), ("PostgreSQL", postgres)):
            dst = make()
            timed(f"-> new {name}: check only", rows, lambda d=dst: plan(src, d))
            timed(f"-> new {name}: copy and verify", rows, lambda d=dst: copy_sessions(src, d))
            big = make()
            fill(big, 1, (SCAN_FACTOR + 1) * args.sessions * args.messages, "big", parts=0)
            timed(f"-> {name} holding {SCAN_FACTOR + 1}x: check only (lookups)", rows, lambda b=big: plan(src, b))
            dst.close()
            big.close()
    print(f"(load {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
