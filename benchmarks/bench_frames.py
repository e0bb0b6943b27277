"""History as data at scale: ``costs(by="day")`` and ``tool_calls()`` over 1,000,000 parts.

Builds a DuckDB file with forge-jupyter's schema (views included) and 1,000,000 parts written
in bulk straight into it (INSERT … SELECT over ``range()``: no Python per row), copies the
same rows into a stdlib sqlite3 file, and times, side by side:

  - the DataFrame API (``Forge.costs(by="day")``, ``Forge.tool_calls()``): open the file
    under the store's lock, run the view SQL tenant-scoped, convert and type the DataFrame;
  - the same two questions asked of sqlite3 in SQL (``pandas.read_sql_query``), with the
    JSON fields read by sqlite's ``json_extract``.

Then SQL a person writes (``Forge.sql``), which runs in a DuckDB of its own holding Parquet
copies of the tenant's tables (store/sandbox.py): warm (the copy kept, the store unchanged
since the last query) and cold (a write came in between, so the tables the query names are
copied again), beside the same question asked through the DataFrame API on the store.

Target: each DataFrame call under one second. Not part of the test run.

    python benchmarks/bench_frames.py [--parts 1000000] [--dir /tmp/bench_frames [--reuse]]
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import duckdb
import pandas as pd
from _small import HELP  # noqa: E402 — benchmarks/ is the script's folder

from forge_jupyter.forge import Forge
from forge_jupyter.message import Event, Message, SessionInfo, TextPart
from forge_jupyter.store.duckdb.schema import migrate
from forge_jupyter.store.query import sandbox
from forge_jupyter.store.rows import event_row, message_row, part_row, session_row
from forge_jupyter.store.sql.tables import (
    EVENT_COLUMNS,
    MESSAGE_COLUMNS,
    PART_COLUMNS,
    SESSION_COLUMNS,
    TIMELINE_COLUMNS,
)

PARTS_PER_TURN = 9  # user text | step-start text tool tool step-finish | step-start text step-finish
SESSIONS = 1_000
DAYS = 90
TOOLS = ["python", "read", "grep", "glob", "sql", "write", "edit", "variables"]
MODELS = ["openai/gpt-4o-mini", "anthropic/claude-sonnet-4-5", "openai/gpt-4.1"]

# Each turn t: messages 3t (user), 3t+1 (assistant calling tools), 3t+2 (assistant answer).
_TURN = "(SELECT range AS t FROM range({turns}))"
_SESSION_ID = "'ses_' || lpad(CAST(t % {sessions} AS VARCHAR), 26, '0')"
_AT = "TIMESTAMPTZ '2025-01-01 00:00:00+00' + to_microseconds(CAST(t * {span_us} // {turns} AS BIGINT))"


def _insert(con: duckdb.DuckDBPyConnection, table: str, columns: tuple[str, ...],
            template: tuple, source: str, **exprs: str) -> None:
    """``INSERT INTO table SELECT … FROM source``: the SQL ``exprs`` name their columns; every
    other column takes ``template``'s value, a row the store's own codec (store/rows.py) made.
    So a column added to the schema is filled as the store fills it, and an expression for a
    column the schema no longer has fails here by name instead of shifting the others."""
    unknown = set(exprs) - set(columns)
    assert not unknown, f"{table} has no column {sorted(unknown)}: update bench_frames.py"
    select, params = [], []
    for column, value in zip(columns, template, strict=True):
        if column in exprs:
            select.append(exprs[column])
        else:
            select.append("?")
            params.append(value)
    con.execute(f"INSERT INTO {table} ({', '.join(columns)}) SELECT {', '.join(select)} "
                f"FROM {source}", params)


def build_duckdb(path: Path, parts: int, sessions: int = SESSIONS) -> dict[str, int]:
    """A forge-jupyter DuckDB file holding about ``parts`` parts in ``sessions`` sessions,
    written in bulk."""
    turns = -(-parts // PARTS_PER_TURN)  # whole turns, at least ``parts`` parts
    fmt = {"turns": turns, "sessions": sessions, "span_us": DAYS * 86_400 * 1_000_000}
    turn, sid, at = _TURN.format(**fmt), _SESSION_ID.format(**fmt), _AT.format(**fmt)
    models = "[" + ", ".join(f"'{m}'" for m in MODELS) + "]"
    tools = "[" + ", ".join(f"'{t}'" for t in TOOLS) + "]"
    con = duckdb.connect(str(path))
    migrate(con, str(path))
    tenant = "default"
    session = session_row(tenant, SessionInfo(agent="build", directory="/work"))
    message = message_row(tenant, Message(session_id="ses_x", role="assistant", agent="build",
                                          provider="openai", status="completed"))
    event = event_row(tenant, Event(session_id="ses_x", type="notice", actor="forge"))
    part = part_row(tenant, TextPart(session_id="ses_x", message_id="msg_x", text=""))
    con.execute("BEGIN")
    _insert(con, "session", SESSION_COLUMNS, session, f"range({sessions})",
            id="'ses_' || lpad(CAST(range AS VARCHAR), 26, '0')", name="'session ' || range",
            created_at="TIMESTAMPTZ '2025-01-01 00:00:00+00'",
            updated_at="TIMESTAMPTZ '2025-04-01 00:00:00+00'",
            timeline_length=f"3 * ({turns} // {sessions} + CASE WHEN range < {turns} % {sessions} "
                            "THEN 1 ELSE 0 END)",
            last_message_id="NULL")
    answer = "CASE WHEN k = 0 THEN 0 ELSE {} END"
    _insert(con, "message", MESSAGE_COLUMNS, message, f"{turn} CROSS JOIN range(3) r(k)",
            id="'msg_' || lpad(CAST(3 * t + k AS VARCHAR), 26, '0')", session_id=sid,
            role="CASE WHEN k = 0 THEN 'user' ELSE 'assistant' END",
            parent_id="CASE WHEN k = 0 THEN NULL ELSE 'msg_' || lpad(CAST(3 * t AS VARCHAR), 26, '0') END",
            model=f"{models}[1 + t % {len(MODELS)}]",
            finish="CASE k WHEN 1 THEN 'tool-calls' WHEN 2 THEN 'stop' END",
            tokens_input=answer.format("1000 + t % 5000"), tokens_output=answer.format("50 + t % 300"),
            tokens_cache_read=answer.format("t % 700"),
            cost="CASE WHEN k = 0 THEN 0 ELSE 0.0001 * (1 + t % 17) END",
            created_at=f"{at} + to_microseconds(k * 2000000)",
            completed_at=f"{at} + to_microseconds(k * 2000000 + 1500000)",
            origin="""CASE WHEN k = 0 THEN '{"notebook": "work.ipynb", "cell_id": "cell-'
                      || (t % 40) || '", "execution_count": ' || t || '}' END""")
    # the nine parts of a turn: (index, type, message offset)
    kinds = ("(VALUES (0, 'text', 0), (1, 'step-start', 1), (2, 'text', 1), (3, 'tool', 1), "
             "(4, 'tool', 1), (5, 'step-finish', 1), (6, 'step-start', 2), (7, 'text', 2), "
             "(8, 'step-finish', 2)) k(i, type, m)")
    rows = f"""(
            SELECT t, i, type, m,
                   'prt_' || lpad(CAST(9 * t + i AS VARCHAR), 26, '0') AS pid, {sid} AS sid,
                   'msg_' || lpad(CAST(3 * t + m AS VARCHAR), 26, '0') AS mid,
                   CASE WHEN type = 'tool' THEN {tools}[1 + (t + i) % {len(TOOLS)}] END AS tool,
                   CASE WHEN type = 'tool' THEN
                       CASE WHEN hash(t, i) % 20 = 0 THEN 'error' ELSE 'completed' END END AS state,
                   type = 'step-finish' AS fin,
                   CASE WHEN type = 'step-finish' THEN 1000 + t % 5000 END AS tin,
                   CASE WHEN type = 'step-finish' THEN 50 + t % 300 END AS tout,
                   CASE WHEN type = 'step-finish' THEN 0.00005 * (1 + t % 17) END AS cost,
                   {at} + to_microseconds(m * 2000000 + i * 100000) AS created,
                   CAST(hash(t, i) % 2000000 AS BIGINT) AS took
            FROM {turn} CROSS JOIN {kinds}
        )"""
    fin = "CASE WHEN fin THEN {} END"
    _insert(con, "part", PART_COLUMNS, part, rows,
            id="pid", session_id="sid", message_id="mid", type="type", tool="tool",
            tool_state="state", call_id="CASE WHEN type = 'tool' THEN 'call_' || (9 * t + i) END",
            tokens_input="tin", tokens_output="tout", tokens_reasoning=fin.format(0),
            tokens_cache_read=fin.format("t % 700"), tokens_cache_write=fin.format(0),
            tokens_estimated=fin.format("false"), cost="cost",
            time_start="CASE WHEN type IN ('text', 'tool') THEN created END",
            time_end="CASE WHEN type IN ('text', 'tool') THEN created + to_microseconds(took) END",
            created_at="created",
            data="""CASE type
                 WHEN 'tool' THEN json_object('id', pid, 'session_id', sid, 'message_id', mid,
                     'type', 'tool', 'call_id', 'call_' || (9 * t + i), 'tool', tool,
                     'state', state, 'input', json_object('code', 'df.describe()  # ' || t),
                     'output', CASE WHEN state = 'completed' THEN repeat('x', 80 + t % 400) END,
                     'error', CASE WHEN state = 'error' THEN 'ValueError: bad input ' || t END,
                     'title', NULL, 'metadata', json_object())
                 WHEN 'step-finish' THEN json_object('id', pid, 'session_id', sid,
                     'message_id', mid, 'type', 'step-finish',
                     'reason', CASE WHEN m = 1 THEN 'tool-calls' ELSE 'stop' END,
                     'tokens', json_object('input', tin, 'output', tout), 'cost', cost)
                 WHEN 'text' THEN json_object('id', pid, 'session_id', sid, 'message_id', mid,
                     'type', 'text',
                     'text', 'Some text of turn ' || t || ' ' || repeat('lorem ', 20))
                 ELSE json_object('id', pid, 'session_id', sid, 'message_id', mid, 'type', type)
               END""")  # whole rows: the session's messages read back as objects too
    _insert(con, "session_message", TIMELINE_COLUMNS, (tenant, None, None, None),
            f"{turn} CROSS JOIN range(3) r(k)", session_id=sid,
            pos=f"CAST(3 * (t // {sessions}) + k AS INTEGER)",
            message_id="'msg_' || lpad(CAST(3 * t + k AS VARCHAR), 26, '0')")
    _insert(con, "event", EVENT_COLUMNS, event, f"range({sessions})",
            id="'evt_' || lpad(CAST(range AS VARCHAR), 26, '0')",
            session_id="'ses_' || lpad(CAST(range AS VARCHAR), 26, '0')",
            created_at="TIMESTAMPTZ '2025-01-01 00:00:00+00'")
    con.execute("COMMIT")
    counts = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
              for t in ("session", "message", "part", "session_message")}
    con.close()
    return counts


def build_sqlite(duck_path: Path, path: Path) -> None:
    """The same rows in a stdlib sqlite3 file (WAL), timestamps as epoch seconds."""
    sq = sqlite3.connect(path)
    sq.execute("PRAGMA journal_mode=WAL")
    sq.execute("PRAGMA synchronous=OFF")
    sq.executescript("""
        CREATE TABLE message (tenant_id TEXT, id TEXT PRIMARY KEY, session_id TEXT, role TEXT,
            parent_id TEXT, agent TEXT, model TEXT, created_at REAL, origin TEXT);
        CREATE TABLE part (tenant_id TEXT, id TEXT PRIMARY KEY, session_id TEXT, message_id TEXT,
            type TEXT, tool TEXT, tool_state TEXT, call_id TEXT, tokens_input INTEGER,
            tokens_output INTEGER, tokens_reasoning INTEGER, tokens_cache_read INTEGER,
            tokens_cache_write INTEGER, cost REAL, time_start REAL, time_end REAL,
            created_at REAL, data TEXT);
    """)
    duck = duckdb.connect(str(duck_path), read_only=True)
    copies = {
        "message": "SELECT tenant_id, id, session_id, role, parent_id, agent, model, "
                   "epoch_us(created_at) / 1e6, CAST(origin AS VARCHAR) FROM message",
        "part": "SELECT tenant_id, id, session_id, message_id, type, tool, tool_state, call_id, "
                "tokens_input, tokens_output, tokens_reasoning, tokens_cache_read, "
                "tokens_cache_write, cost, epoch_us(time_start) / 1e6, epoch_us(time_end) / 1e6, "
                "epoch_us(created_at) / 1e6, CAST(data AS VARCHAR) FROM part",
    }
    for table, query in copies.items():
        cur = duck.execute(query)
        width = len(cur.description)
        insert = f"INSERT INTO {table} VALUES ({', '.join('?' * width)})"
        while rows := cur.fetchmany(100_000):
            sq.executemany(insert, rows)
    duck.close()
    sq.execute("CREATE INDEX part_type ON part (type)")
    sq.execute("CREATE INDEX part_message ON part (message_id)")
    sq.commit()
    sq.close()


SQLITE_COSTS_BY_DAY = """
    SELECT date(p.created_at, 'unixepoch') AS day, count(*) AS steps,
           sum(p.tokens_input) AS tokens_input, sum(p.tokens_output) AS tokens_output,
           sum(p.tokens_reasoning) AS tokens_reasoning, sum(p.tokens_cache_read) AS cache_read,
           sum(p.tokens_cache_write) AS cache_write, sum(p.cost) AS cost
    FROM part p JOIN message a ON a.id = p.message_id
    WHERE p.type = 'step-finish' AND p.tenant_id = 'default'
    GROUP BY day ORDER BY day"""
SQLITE_TOOL_CALLS = """
    SELECT p.id AS part_id, p.session_id, p.message_id, p.call_id, p.tool, p.tool_state AS state,
           m.agent, m.model, p.time_start, p.time_end, p.time_end - p.time_start AS duration_s,
           json_extract(p.data, '$.input') AS input,
           length(CAST(json_extract(p.data, '$.input') AS BLOB)) AS input_bytes,
           length(CAST(json_extract(p.data, '$.output') AS BLOB)) AS output_bytes,
           json_extract(p.data, '$.error') AS error, json_extract(p.data, '$.title') AS title,
           p.created_at
    FROM part p JOIN message m ON m.id = p.message_id
    WHERE p.type = 'tool' AND p.tenant_id = 'default'
    ORDER BY p.id"""


def timed(fn: Callable[[], pd.DataFrame], repeat: int) -> tuple[float, int]:
    """(median seconds, rows) over ``repeat`` runs after one warm-up."""
    rows = len(fn())
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), rows


PERSON_SQL = [
    ("costs by day", "SELECT date_trunc('day', created_at) AS day, count(*) AS steps, "
                     "sum(cost) AS cost FROM costs GROUP BY 1 ORDER BY 1",
     lambda forge: forge.costs(by="day")),
    ("tool calls", "SELECT * FROM tool_calls ORDER BY part_id", lambda forge: forge.tool_calls()),
    ("sessions", "SELECT name, messages FROM sessions", lambda forge: forge.sessions()),
]


def person_sql(forge: Forge, repeat: int) -> None:
    """forge.sql warm and cold, beside the DataFrame API's answer to the same question."""
    def cold_time(query: str) -> float:
        times = []
        for _ in range(repeat):
            forge.store.create_session(SessionInfo())  # the store changed: copy again
            start = time.perf_counter()
            forge.sql(query)
            times.append(time.perf_counter() - start)
        return statistics.median(times)

    print(f"\n{'forge.sql':<18}{'rows':>9}{'warm':>10}{'cold':>12}{'frame':>10}"
          f"{'warm/frame':>12}")
    for name, query, frame in PERSON_SQL:
        warm, rows = timed(lambda q=query: forge.sql(q), repeat)
        cold = cold_time(query)
        ours, _ = timed(lambda f=frame: f(forge), repeat)
        print(f"{name:<18}{rows:>9}{warm * 1000:>7.0f} ms{cold * 1000:>9.0f} ms"
              f"{ours * 1000:>7.0f} ms{warm / ours:>11.1f}x")
    forge.sql("SHOW ALL TABLES")  # names no table: every one is copied
    [copy] = list(sandbox._copies.values())[-1:]
    size = sum(f.stat().st_size for f in copy.folder.glob("*.parquet"))
    print(f"(the tenant's whole copy: {size / 1e6:.0f} MB of Parquet in a private temporary "
          f"folder, for a {forge.store.path.stat().st_size / 1e6:.0f} MB store)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", type=int, default=1_000_000)
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--reuse", action="store_true",
                        help="use the files a previous run left in --dir (the sessions it "
                             "added for the cold SQL timings included)")
    parser.add_argument("--small", action="store_true", help=HELP)
    args = parser.parse_args()
    if args.small:
        args.parts, args.repeat = 9_000, 1
    work = args.dir or Path(tempfile.mkdtemp(prefix="bench_frames_"))
    work.mkdir(parents=True, exist_ok=True)
    duck_path, sqlite_path = work / "forge.duckdb", work / "forge.sqlite"
    if not (args.reuse and duck_path.exists() and sqlite_path.exists()):
        for p in (duck_path, sqlite_path, Path(f"{sqlite_path}-wal"),
                  Path(f"{sqlite_path}-shm")):
            p.unlink(missing_ok=True)
        start = time.perf_counter()
        counts = build_duckdb(duck_path, args.parts)
        built_duck = time.perf_counter() - start
        start = time.perf_counter()
        build_sqlite(duck_path, sqlite_path)
        built_sqlite = time.perf_counter() - start
        print(f"rows: {counts}  (DuckDB file {duck_path.stat().st_size / 1e6:.0f} MB, built in "
              f"{built_duck:.1f} s; sqlite3 copy {sqlite_path.stat().st_size / 1e6:.0f} MB, "
              f"{built_sqlite:.1f} s)")

    forge = Forge(db=str(duck_path), builtin_tools=False, load_plugins=False)
    sq = sqlite3.connect(sqlite_path)
    cases = [
        ('costs(by="day")', lambda: forge.costs(by="day"),
         lambda: pd.read_sql_query(SQLITE_COSTS_BY_DAY, sq)),
        ("tool_calls()", forge.tool_calls, lambda: pd.read_sql_query(SQLITE_TOOL_CALLS, sq)),
    ]
    print(f"\n{'query':<18}{'rows':>9}{'DuckDB frames':>16}{'sqlite3 SQL':>14}{'sqlite/duck':>13}")
    for name, ours, theirs in cases:
        duck_s, rows = timed(ours, args.repeat)
        sqlite_s, sqlite_rows = timed(theirs, args.repeat)
        assert rows == sqlite_rows, (name, rows, sqlite_rows)
        verdict = "" if duck_s < 1.0 else "  (over the 1 s target)"
        print(f"{name:<18}{rows:>9}{duck_s * 1000:>13.0f} ms{sqlite_s * 1000:>11.0f} ms"
              f"{sqlite_s / duck_s:>12.1f}x{verdict}")
    extra = [
        ("history(session)", lambda: forge.history("session 7", include_superseded=True)),
        ('costs(by="cell")', lambda: forge.costs(by="cell")),
        ("context(session)", lambda: forge.context("session 7")),
    ]
    for name, fn in extra:
        secs, rows = timed(fn, args.repeat)
        print(f"{name:<18}{rows:>9}{secs * 1000:>13.0f} ms")
    person_sql(forge, args.repeat)
    sq.close()
    forge.close()
    if args.dir is None:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"\nfiles kept in {work}")


if __name__ == "__main__":
    main()
