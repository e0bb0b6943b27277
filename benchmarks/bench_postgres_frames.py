"""``costs(by="day")`` over N parts: the DuckDB store beside the PostgreSQL store (prints).

The same rows in both: bench_frames.build_duckdb writes ~N parts into a DuckDB file in bulk;
they are copied as they are into a throwaway PostgreSQL cluster (tests/pg_cluster.py, as the
superuser, then ANALYZE). Then, side by side:

  - ``costs(by="day")``, the DataFrame API. DuckDB: the view SQL on the file, under its lock.
    PostgreSQL: the same SQL translated, run by PostgreSQL over its own ``costs`` view (schema
    step 4; row-level security scopes it), typed to the same dtypes (store/postgres_select.py);
  - the same question as SQL a person writes (``forge.sql``), which on both backends runs on a
    copy of the tenant's rows in a locked DuckDB (store/sandbox.py): after a model step was
    written (one message, one step-finish part: the tables the query reads are copied again —
    from PostgreSQL with COPY … TO STDOUT in a read-only, repeatable-read transaction,
    store/postgres_copy.py) and again with the copy current (on PostgreSQL a fingerprint of
    the tables the copy holds says so; its cost is shown apart).

Not part of the test run. The default size runs in a few minutes on 2 cores:

    python benchmarks/bench_postgres_frames.py [--parts 200000] [--repeat 3]
    python benchmarks/bench_postgres_frames.py --parts 1000000      # the issue's figure
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "benchmarks")]
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import duckdb  # noqa: E402
import pandas as pd  # noqa: E402
import psycopg  # noqa: E402
from _small import HELP  # noqa: E402 — benchmarks/ is the script's folder
from bench_frames import build_duckdb  # noqa: E402
from pg_cluster import pg_cluster_running  # noqa: E402

from forge_jupyter import frames  # noqa: E402
from forge_jupyter.message import Message, SessionInfo, StepFinishPart, now  # noqa: E402
from forge_jupyter.store.duckdb.store import DuckDBStore  # noqa: E402
from forge_jupyter.store.ops import AppendMessage, PutMessage, PutPart  # noqa: E402
from forge_jupyter.store.postgres import tenant_copy as postgres_copy  # noqa: E402
from forge_jupyter.store.postgres.schema import migrate  # noqa: E402
from forge_jupyter.store.postgres.store import PostgresStore  # noqa: E402
from forge_jupyter.store.sql.tables import TENANT_TABLES  # noqa: E402

# costs(by="day") as a person would write it for forge.sql
PERSON = """
    SELECT date_trunc('day', timezone('UTC', created_at)) AS day, count(*) AS steps,
           sum(tokens_input) AS tokens_input, sum(tokens_output) AS tokens_output,
           sum(cost) AS cost
    FROM costs GROUP BY 1 ORDER BY 1"""


def load_postgres(duck_path: Path, admin_dsn: str, folder: Path) -> None:
    """Every row of the DuckDB file into the PostgreSQL database, as they are."""
    con = duckdb.connect(str(duck_path), read_only=True)
    columns = postgres_copy.duckdb_columns()
    with psycopg.connect(admin_dsn) as pg:
        for table in TENANT_TABLES:
            names = ", ".join(c for c, _ in columns[table])
            csv = folder / f"{table}.csv"
            con.execute(f"COPY (SELECT {names} FROM {table}) TO '{csv}' (FORMAT csv, HEADER false)")
            with pg.cursor().copy(f"COPY {table} ({names}) FROM STDIN (FORMAT csv)") as copy, \
                    open(csv, "rb") as f:
                while chunk := f.read(1 << 20):
                    copy.write(chunk)
            csv.unlink()
        pg.commit()
        pg.autocommit = True
        pg.execute("VACUUM ANALYZE")
    con.close()


def median(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--small", action="store_true", help=HELP)
    args = parser.parse_args()
    if args.small:
        args.parts, args.repeat = 9_000, 1
    with tempfile.TemporaryDirectory() as tmp, pg_cluster_running() as cluster:
        folder = Path(tmp)
        duck_path = folder / "bench.duckdb"
        started = time.perf_counter()
        counts = build_duckdb(duck_path, args.parts)
        db = cluster.create_database("bench")
        app = db.create_app_role("bench_app")
        migrate(db.owner_dsn, (app.name,))
        load_postgres(duck_path, db.admin_dsn, folder)
        print(f"built {counts} in DuckDB and PostgreSQL in {time.perf_counter() - started:.0f} s; "
              f"load {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores")

        duck = DuckDBStore(duck_path, tenant_id="default")
        pg = PostgresStore(app.dsn, tenant_id="default", statement_timeout=600)
        ours, theirs = frames.costs(duck, by="day"), frames.costs(pg, by="day")
        pd.testing.assert_frame_equal(ours, theirs)  # the same answer, the same dtypes

        def cold(store: DuckDBStore | PostgresStore) -> float:
            times = []
            session = store.create_session(SessionInfo())
            for _ in range(args.repeat):  # a model step in between: the copy is taken again
                step = Message(session_id=session.id, role="assistant", status="completed",
                               completed_at=now())
                store.write([PutMessage(step), PutPart(StepFinishPart(
                    session_id=session.id, message_id=step.id)), AppendMessage(session.id, step.id)])
                started = time.perf_counter()
                store.sql(PERSON)
                times.append(time.perf_counter() - started)
            return statistics.median(times)

        def fingerprint() -> object:
            with pg.reading() as con:
                postgres_copy.prepare(con.conn)
                return postgres_copy.fingerprint(con.conn, "default", ("part", "message"))

        pd.testing.assert_frame_equal(duck.sql(PERSON), pg.sql(PERSON))
        rows = [
            ('costs(by="day"), the DataFrame API',
             median(lambda: frames.costs(duck, by="day"), args.repeat),
             median(lambda: frames.costs(pg, by="day"), args.repeat)),
            ("forge.sql, the same, after a model step", cold(duck), cold(pg)),
            ("forge.sql, again (the copy is current)",
             median(lambda: duck.sql(PERSON), args.repeat),
             median(lambda: pg.sql(PERSON), args.repeat)),
            ("  of which: PostgreSQL's fingerprint (part, message)", float("nan"),
             median(fingerprint, args.repeat)),
        ]
        print(f'\nover {counts["part"]:,} parts, {len(ours)} days, one tenant '
              f"(median of {args.repeat}; load {os.getloadavg()[0]:.1f})")
        print(f"{'':<52} {'DuckDB s':>9} {'PostgreSQL s':>13} {'ratio':>6}")
        for label, a, b in rows:
            print(f"{label:<52} {a:>9.3f} {b:>13.3f} {b / a:>6.1f}")
        pg.close()
        duck.close()


if __name__ == "__main__":
    main()
