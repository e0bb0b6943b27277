"""Generate docs/schema.md from a live database, so the page cannot drift from the schema.

Writes a small, fixed history through the DuckDB store's own write path into a fresh file,
then documents every table and view of that file: columns and types as DuckDB's catalog
reports them, beside PostgreSQL's from the catalog of a database the PostgreSQL migrations
made (a throwaway cluster, tests/pg_cluster.py, unless ``--postgres OWNER_DSN``), and one
example query each, executed (tenant-scoped, as ``forge.sql`` runs
it) with its output shown. Everything in the history is fixed — ids, times, tokens, costs —
so the page is the same on every run; tests/frames/test_schema_docs.py regenerates it and
compares.

    python scripts/gen_schema_docs.py            # rewrite docs/schema.md
    python scripts/gen_schema_docs.py --check    # exit 1 if docs/schema.md is stale
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from forge_jupyter.message import (
    CompactionPart,
    Event,
    Message,
    SessionInfo,
    StepFinishPart,
    StepStartPart,
    TextPart,
    Tokens,
    ToolPart,
)
from forge_jupyter.store.base import Store
from forge_jupyter.store.duckdb.store import DuckDBStore
from forge_jupyter.store.ops import AppendMessage, PutEvent, PutMessage, PutPart
from forge_jupyter.store.sql.tables import LATEST
from forge_jupyter.store.sql.views import VIEW_NAMES, VIEWS

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "schema.md"
PgColumns = dict[str, dict[str, str]]
T0 = datetime(2025, 3, 3, 9, 0, tzinfo=UTC).timestamp()
MODEL = "openai/gpt-4o-mini"

TABLES: dict[str, tuple[str, str]] = {
    "session": (
        "One row per session, deleted ones kept as tombstones (`deleted_at`). The runner lease "
        "(`lease_owner`, `lease_expires`) and the timeline's tail (`timeline_length`, "
        "`last_message_id`) live here too.",
        "SELECT name, agent, timeline_length, deleted_at IS NOT NULL AS deleted FROM session",
    ),
    "message": (
        "Message bodies: the envelope of a user prompt or an assistant answer — role, parent, "
        "agent, model, status, finish reason, error, token usage and cost. `origin` (JSON) "
        "says which notebook cell a prompt came from; `replay_of` is set on the messages of "
        "a replayed turn (Restart & Run All), naming the recorded message each one repeats "
        "(its `metadata.replay` says when and with which model it was recorded).",
        "SELECT id, role, status, finish, tokens_input, tokens_output, cost\n"
        "FROM message ORDER BY id",
    ),
    "part": (
        "The paragraphs and attachments of a message, in id order. The columns hold what "
        "people query (type, tool, tool state, tokens, cost, timings); `data` holds the whole "
        "part as JSON.",
        "SELECT id, type, tool, tool_state, tokens_input, cost FROM part ORDER BY id",
    ),
    "session_message": (
        "Each session's timeline: ordered pointers (`pos`) to message bodies. A fork copies "
        "the pointers up to the message it forks from; no body is copied.",
        "SELECT pos, message_id FROM session_message ORDER BY pos",
    ),
    "event": (
        "An append-only record of what changed a session's shape: compactions (reason, tokens "
        "before and after), forks, permission decisions, aborts, recoveries, imports, "
        "deletions and cleanups. `data` holds the details as JSON.",
        "SELECT type, actor, data ->> 'reason' AS reason FROM event ORDER BY id",
    ),
    "forge_schema": (
        "The schema version of the file (the migration steps of `store/schema.py`); it "
        "belongs to no tenant.",
        "SELECT version FROM forge_schema",
    ),
}


# ------------------------------------------------------------------------------ the history


def _at(seconds: float) -> float:
    return T0 + seconds


class _Writer:
    """Fixed ids and times, written through the store's write path."""

    def __init__(self, store: Store, session_id: str) -> None:
        self.store, self.sid = store, session_id
        self.messages = self.parts = 0

    def _mid(self) -> str:
        self.messages += 1
        return f"msg_{self.messages:04d}"

    def _pid(self) -> str:
        self.parts += 1
        return f"prt_{self.parts:04d}"

    def write(self, message: Message) -> Message:
        self.store.write([PutMessage(message), *(PutPart(p) for p in message.parts),
                          AppendMessage(self.sid, message.id)])
        return message

    def user(self, at: float, text: str | None, *, cell: int | None = None,
             compaction: tuple[str, str | None] | None = None) -> Message:
        m = Message(id=self._mid(), session_id=self.sid, role="user", status="completed",
                    model=MODEL, created_at=_at(at), completed_at=_at(at),
                    origin={"notebook": "analysis.ipynb", "cell_id": f"cell-{cell}",
                            "execution_count": cell} if cell else None)
        if text is not None:
            m.parts.append(TextPart(id=self._pid(), session_id=self.sid, message_id=m.id,
                                    text=text, created_at=_at(at), time_start=_at(at),
                                    time_end=_at(at)))
        if compaction is not None:
            reason, tail = compaction
            m.parts.append(CompactionPart(id=self._pid(), session_id=self.sid, message_id=m.id,
                                          auto=False, reason=reason, tail_start=tail,
                                          created_at=_at(at)))
        return self.write(m)

    def assistant(self, parent: Message, at: float, text: str | None, usage: tuple[int, int],
                  cost: float, *, tools: list[tuple[str, dict, str, str | None]] = (),
                  summary: bool = False) -> Message:
        took = 1.5 + 0.5 * len(tools)
        finish = "tool-calls" if tools else "stop"
        m = Message(id=self._mid(), session_id=self.sid, role="assistant", parent_id=parent.id,
                    model=MODEL, provider="openai", status="completed", finish=finish,
                    summary=summary, tokens=Tokens(input=usage[0], output=usage[1]), cost=cost,
                    created_at=_at(at), completed_at=_at(at + took))
        m.parts.append(StepStartPart(id=self._pid(), session_id=self.sid, message_id=m.id,
                                     model=MODEL, created_at=_at(at)))
        if text is not None:
            m.parts.append(TextPart(id=self._pid(), session_id=self.sid, message_id=m.id,
                                    text=text, created_at=_at(at + 0.2),
                                    time_start=_at(at + 0.2), time_end=_at(at + 1)))
        for i, (tool, args, state, result) in enumerate(tools):
            start = at + 1 + 0.5 * i
            m.parts.append(ToolPart(
                id=self._pid(), session_id=self.sid, message_id=m.id, call_id=f"call_{i}",
                tool=tool, state=state, input=args, created_at=_at(start),
                output=result if state == "completed" else None,
                error=result if state == "error" else None,
                time_start=_at(start), time_end=_at(start + 0.25 * (i + 1))))
        m.parts.append(StepFinishPart(id=self._pid(), session_id=self.sid, message_id=m.id,
                                      reason=finish, tokens=m.tokens, cost=cost, model=MODEL,
                                      created_at=_at(at + took)))
        return self.write(m)


def build(path: Path) -> DuckDBStore:
    """A fresh DuckDB file holding one session of two turns, a compaction and a third turn."""
    store = DuckDBStore(path)
    write_history(store)
    return store


def write_history(store: Store) -> None:
    """The fixed history, into any store (tests/frames/test_schema_examples.py writes it into
    PostgreSQL and runs every example there in psql)."""
    sid = "ses_demo"
    store.create_session(SessionInfo(id=sid, name="demo", directory="/work", created_at=T0,
                                     updated_at=T0))
    w = _Writer(store, sid)
    q1 = w.user(0, "Load sales.csv and describe it.", cell=1)
    w.assistant(q1, 1, None, (820, 64), 0.000162, tools=[
        ("python", {"code": "df = pd.read_csv('sales.csv'); df.describe()"}, "completed",
         "       units   price\ncount  120.0   120.0"),
        ("read", {"path": "notes.md"}, "error", "FileNotFoundError: notes.md"),
    ])
    w.assistant(q1, 4, "120 rows; units and price look clean.", (1_020, 41), 0.000178)
    q2 = w.user(60, "Plot units per month.", cell=2)
    w.assistant(q2, 61, "Done: a bar chart of units per month.", (1_240, 52), 0.000217,
                tools=[("python", {"code": "df.groupby('month').units.sum().plot.bar()"},
                        "completed", "<Axes>")])
    ask = w.user(120, None, compaction=("requested by the user", q2.id))
    summary = w.assistant(ask, 121, "## Goal\nDescribe and plot sales.csv.", (1_400, 90),
                          0.000264, summary=True)
    store.write([PutEvent(Event(
        id="evt_0001", session_id=sid, type="compaction", actor="forge", created_at=_at(124),
        data={"auto": False, "reason": "requested by the user", "request_message_id": ask.id,
              "summary_message_id": summary.id, "tail_start": q2.id, "extractive": False,
              "tokens_before": 1_310, "tokens_after": 460},
    ))])
    q3 = w.user(180, "Which month sold most?", cell=3)
    w.assistant(q3, 181, "March, with 41 units.", (610, 12), 0.000099)


# ------------------------------------------------------------------------------ PostgreSQL

# The PostgreSQL section's prose ({views}: what the catalog says of the views).
POSTGRES = (Path(__file__).resolve().parent / "schema_docs_postgres.md").read_text()


# ------------------------------------------------------------------------------ the page


def _cell(value: object) -> str:
    if value is None or value is pd.NA or value is pd.NaT:
        return "NULL"
    if isinstance(value, float):
        return "NULL" if math.isnan(value) else f"{value:.6g}"
    if isinstance(value, pd.Timestamp):
        return value.tz_convert("UTC").strftime("%Y-%m-%d %H:%M:%S")
    return str(value).replace("\n", "\\n").replace("|", "\\|")


def markdown_table(frame: pd.DataFrame) -> str:
    head = "| " + " | ".join(frame.columns) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    rows = ["| " + " | ".join(_cell(v) for v in row) + " |"
            for row in frame.astype(object).itertuples(index=False)]
    return "\n".join([head, rule, *rows])


def _columns(store: DuckDBStore, name: str, pg: PgColumns) -> pd.DataFrame:
    """A table's or view's columns and types, from DuckDB's catalog, beside PostgreSQL's
    (``null`` for tables: a view's columns are all nullable there)."""
    with store.reading() as con:
        columns = con.sql(
            "SELECT column_name AS column, data_type AS type, "
            "CASE WHEN is_nullable THEN '' ELSE 'not null' END AS \"null\" "
            "FROM duckdb_columns() WHERE database_name = current_database() "
            "AND table_name = ? ORDER BY column_index", params=[name]).df()
    if name in pg:
        columns.insert(2, "postgresql", [pg[name].get(c, "(missing)") for c in columns.column])
    if name in VIEW_NAMES:
        columns = columns.drop(columns="null")
    return columns[columns.column != "tenant_id"]


def _section(store: DuckDBStore, name: str, description: str, example: str,
             pg: PgColumns) -> str:
    columns = _columns(store, name, pg)
    output = store.sql(example)
    return "\n\n".join([
        f"### `{name}`", description, markdown_table(columns),
        f"```sql\n{example}\n```", markdown_table(output),
    ])


def render(store: DuckDBStore, pg: PgColumns) -> str:
    intro = f"""\
<!-- Generated by scripts/gen_schema_docs.py from a live database; do not edit by hand. -->
# The history schema

Every forge-jupyter database (schema version {LATEST}) holds the raw tables below and, over
them, documented views: the same SQL on every backend (the memory store runs it on an
in-memory DuckDB copy of its rows). Query them with `forge.sql("SELECT …")` or
`%forge sql SELECT …` (one read-only SELECT; a writing statement is refused), or open the
file in any DuckDB client. A PostgreSQL database holds the same tables and views, its
tenants kept apart by row-level security ([PostgreSQL](#postgresql) below).

Every table and view carries a `tenant_id` column (left out of the column lists below).
Through `forge.sql` each table and view name stands for your tenant's rows only; in a plain
DuckDB client, filter on `tenant_id` yourself. `type` is DuckDB's type, `postgresql` the
same column's in a PostgreSQL database. Times are `TIMESTAMP WITH TIME ZONE`, in UTC
in every DataFrame. The example outputs come from a small fixed history written by the
generator: one session, two turns, a manual compaction that keeps the last turn, a third
turn.

Every example query runs as written on both engines — in `forge.sql`, a DuckDB client, and
psql on a PostgreSQL database (as a login role pinned to one tenant, no `SET` needed) — with
the output shown (the tests run each one in psql and compare). A block that needs one engine
says so in its first line (`-- PostgreSQL only`). Two habits keep SQL portable: read a JSON
field by its key, `data ->> 'reason'` (DuckDB's path `'$.reason'` is, to PostgreSQL, a key
named `$.reason`: NULL on every row, no error), and name the columns of `GROUP BY` / `ORDER
BY` (`GROUP BY ALL` is DuckDB's); PostgreSQL rounds a `numeric`, not a double:
`round(CAST(x AS DECIMAL(18, 6)), 3)` reads alike on both."""
    tables = [_section(store, name, *TABLES[name], pg) for name in TABLES]
    views = [_section(store, v.name, v.description, v.example, pg) for v in VIEWS]
    missing = [v for v in VIEW_NAMES if v not in pg]
    pg_views = ("The views exist in PostgreSQL too (schema step 4) with the same names and "
                "columns (their PostgreSQL types are listed above), created `security_invoker` "
                "so that the policies below scope them to the tenant of whoever reads them — "
                "in psql, say. The DataFrames run their SQL in PostgreSQL over these views, "
                "typed to the same dtypes as on DuckDB; `forge.sql` and `%forge sql` run on a "
                "copy ([below](#sql-a-person-writes-forgesql-on-postgresql))."
                if not missing else
                "The views are not created on PostgreSQL yet ("
                + ", ".join(f"`{v}`" for v in missing) + "): there, `forge.sql`, the sql tool "
                "and the DataFrames say that they do not run yet.")
    return "\n\n".join([intro, "## Tables", *tables, "## Views", *views,
                         POSTGRES.replace("{views}", pg_views).rstrip()]) + "\n"


def postgres_columns(owner_dsn: str) -> PgColumns:
    """{table or view: {column: PostgreSQL type (+ not null)}}, from the catalog of a database
    the package's own migrations brought to the latest version."""
    import psycopg

    from forge_jupyter.store.postgres.schema import migrate

    migrate(owner_dsn)
    with psycopg.connect(owner_dsn) as con:
        rows = con.execute(
            "SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull "
            "FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
            "WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'v') "
            "AND a.attnum > 0 AND NOT a.attisdropped ORDER BY c.relname, a.attnum").fetchall()
    found: PgColumns = {}
    for table, column, type_, _not_null in rows:
        found.setdefault(table, {})[column] = type_
    return found


def live_postgres(owner_dsn: str | None) -> PgColumns:
    """The catalog of ``owner_dsn``, or of a throwaway cluster (tests/pg_cluster.py)."""
    if owner_dsn:
        return postgres_columns(owner_dsn)
    sys.path.insert(0, str(ROOT / "tests"))
    from pg_cluster import pg_cluster_running

    with pg_cluster_running() as cluster:
        return postgres_columns(cluster.create_database("schema_docs").owner_dsn)


def generate(owner_dsn: str | None = None) -> str:
    pg = live_postgres(owner_dsn)
    with tempfile.TemporaryDirectory() as tmp:
        store = build(Path(tmp) / "schema-docs.duckdb")
        with store.hold():
            return render(store, pg)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if docs/schema.md is stale")
    parser.add_argument("--out", type=Path, default=DOCS)
    parser.add_argument("--postgres", metavar="OWNER_DSN",
                        help="read PostgreSQL's types from this database, migrated first as its "
                        "owner (default: a throwaway cluster from Debian's postgresql)")
    args = parser.parse_args()
    text = generate(args.postgres)
    if args.check:
        current = args.out.read_text() if args.out.exists() else ""
        if current != text:
            print(f"{args.out} is stale: run python scripts/gen_schema_docs.py", file=sys.stderr)
            return 1
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
