"""The DataFrame API and ``forge.sql`` on a PostgreSQL store: the same frames as on DuckDB.

The scripted run (frames_helpers.script: tool calls, a failing tool, compactions, a fork, an
unpriced model, a provider error, another tenant) goes through the real loop into a DuckDB
file; its sessions are then copied, verified row for row, into PostgreSQL (copy.py), each
tenant's into that tenant's store. Every frame is then asked of both stores and must be equal
— values, column names, dtypes — but for what a copy cannot keep (a session's ``updated_at``,
the fork event's id and time). PostgreSQL runs in a throwaway cluster (tests/pg_cluster.py);
the stores log in as an application role that owns nothing.
"""

from __future__ import annotations

import pandas as pd
import pytest

from forge_jupyter import frames
from forge_jupyter.message import SessionInfo
from forge_jupyter.store.postgres.schema import migrate
from forge_jupyter.store.postgres.store import PostgresStore
from forge_jupyter.store.sql.views import VIEW_NAMES
from tests.frames.frames_helpers import make_forge, script


@pytest.fixture(scope="module")
def both(server, pg_cluster, tmp_path_factory):
    """(the DuckDB Forge, the PostgreSQL store of tenant default, its database)."""
    path = tmp_path_factory.mktemp("pgframes") / "forge.duckdb"
    forge, other = make_forge(server, str(path)), make_forge(server, str(path), tenant="other")
    sessions = script(server, forge, other)
    db = pg_cluster.create_database()
    app = db.create_app_role()
    migrate(db.owner_dsn, (app.name,))
    forge.copy_to(app.dsn)
    other.copy_to(app.dsn)
    pg = PostgresStore(app.dsn, tenant_id="default")
    yield forge, pg, sessions
    pg.close()
    forge.close()
    other.close()
    pg_cluster.drop_database(db)


def same(duck: pd.DataFrame, pg: pd.DataFrame, *, drop: tuple[str, ...] = ()) -> None:
    """Equal frames: the same columns in the same order, the same dtypes, the same values."""
    assert list(pg.columns) == list(duck.columns)
    assert dict(pg.dtypes) == dict(duck.dtypes)
    assert len(duck) > 0
    pd.testing.assert_frame_equal(pg.drop(columns=list(drop)), duck.drop(columns=list(drop)),
                                  check_exact=False, rtol=1e-12)


FRAMES = [
    ("sessions", {}, ("updated_at",)),
    ("messages", {}, ()),
    ("parts", {}, ()),
    ("parts", {"type": ["tool", "step-finish"]}, ()),
    ("tool_calls", {}, ()),
    ("tool_calls", {"state": "error"}, ()),
    ("compactions", {}, ()),
    ("context", {}, ()),
    ("turns", {}, ()),
    *[("costs", {"by": by}, ()) for by in ("session", "day", "model", "agent", "cell")],
    ("costs", {"by": ["day", "model"]}, ()),
]


@pytest.mark.parametrize("name, kwargs, drop", FRAMES,
                         ids=[f"{n}-{k}" if k else n for n, k, _ in FRAMES])
def test_every_frame_is_the_same_on_postgres(both, name, kwargs, drop):
    forge, pg, _ = both
    same(getattr(frames, name)(forge.store, **kwargs), getattr(frames, name)(pg, **kwargs),
         drop=drop)


@pytest.mark.parametrize("session", ["alpha", "beta", "fork"])
@pytest.mark.parametrize("superseded", [False, True])
def test_history_and_per_session_frames_are_the_same(both, session, superseded):
    forge, pg, sessions = both
    sid = sessions[session].id
    same(frames.history(forge.store, sid, superseded), frames.history(pg, sid, superseded))
    for name in ("messages", "parts", "tool_calls", "turns", "context"):
        duck, theirs = getattr(frames, name)(forge.store, sid), getattr(frames, name)(pg, sid)
        assert dict(theirs.dtypes) == dict(duck.dtypes), name
        pd.testing.assert_frame_equal(theirs, duck, check_exact=False, rtol=1e-12)


def test_events_are_the_same_but_for_the_fork_copy_rewrites(both):
    forge, pg, _ = both
    duck, theirs = frames.events(forge.store), frames.events(pg)
    assert dict(theirs.dtypes) == dict(duck.dtypes)
    key = ["session_id", "type", "actor", "data"]
    pd.testing.assert_frame_equal(
        theirs[theirs.type != "fork"][key].reset_index(drop=True),
        duck[duck.type != "fork"][key].reset_index(drop=True))
    assert (theirs.type == "fork").sum() == (duck.type == "fork").sum() == 1


@pytest.mark.parametrize("query", [
    "SELECT model, count(*) AS steps, sum(tokens_input) AS tokens_in, sum(cost) AS cost "
    "FROM costs GROUP BY model ORDER BY model",
    "SELECT type, count(*) AS n FROM parts GROUP BY ALL ORDER BY ALL",
    "SELECT pos, role, is_boundary, visible_to_model, created_at FROM timeline "
    "ORDER BY session_id, pos",
    "WITH t AS (SELECT * FROM turns) SELECT kind, prompt, cost, started_at FROM t "
    "ORDER BY started_at",
    "SELECT m.id, m.summary, m.cost, p.data FROM message m JOIN part p ON p.message_id = m.id "
    "ORDER BY p.id",
    "SELECT tenant_id, count(*) AS n FROM session GROUP BY ALL",
    "SELECT * FROM forge_schema",
])
def test_sql_gives_the_same_answer_and_types(both, query):
    forge, pg, _ = both
    duck, theirs = frames.sql(forge.store, query), frames.sql(pg, query)
    assert dict(theirs.dtypes) == dict(duck.dtypes)
    pd.testing.assert_frame_equal(theirs, duck)


def test_every_view_has_the_same_columns_and_dtypes(both):
    forge, pg, _ = both
    for name in VIEW_NAMES:
        duck = frames.sql(forge.store, f"SELECT * FROM {name} ORDER BY ALL")
        theirs = frames.sql(pg, f"SELECT * FROM {name} ORDER BY ALL")
        assert dict(theirs.dtypes) == dict(duck.dtypes), name
        assert len(theirs) == len(duck), name


def test_a_write_is_seen_by_the_next_query(both):
    """The copy is kept while the tenant's rows stay the same, and only that long."""
    _, pg, _ = both
    before = frames.sql(pg, "SELECT count(*) AS n FROM session")["n"][0]
    assert frames.sql(pg, "SELECT count(*) AS n FROM session")["n"][0] == before
    info = pg.create_session(SessionInfo(name="written-after"))
    assert frames.sql(pg, "SELECT count(*) AS n FROM session")["n"][0] == before + 1
    assert "written-after" in set(frames.sessions(pg)["name"])
    pg.update_session(info.model_copy(update={"title": "retitled"}))
    found = frames.sql(pg, "SELECT title FROM session WHERE name = 'written-after'")
    assert list(found["title"]) == ["retitled"]
    pg.delete_session(info.id)
    assert frames.sql(pg, "SELECT count(*) AS n FROM sessions")["n"][0] == before


# ------------------------------------------------- the views in PostgreSQL itself (psql)

ORDER = {"sessions": "session_id", "messages": "message_id", "parts": "part_id",
         "tool_calls": "part_id", "costs": "part_id", "turns": "message_id",
         "timeline": "session_id, pos", "context": "session_id, step",
         "compactions": "event_id", "events": "event_id"}
# what a copy cannot keep (copy.py): when a session last changed, the fork event's id and time
NOT_COPIED = {"sessions": {"updated_at"}, "events": {"event_id", "created_at"}}


def normal(value):
    """A value as both engines agree on it: instants in UTC, numbers as floats."""
    if not isinstance(value, list | tuple) and pd.isna(value):
        return None
    if hasattr(value, "tzinfo") and hasattr(value, "isoformat"):
        return pd.Timestamp(value).tz_convert("UTC")
    if isinstance(value, bool | str):
        return value
    return round(float(value), 9)


@pytest.mark.parametrize("name", VIEW_NAMES)
def test_the_postgres_views_hold_what_duckdbs_hold(both, name):
    """The views a person reads in psql: the same columns and rows as the DuckDB views."""
    forge, pg, _ = both
    duck = frames.sql(forge.store, f"SELECT * FROM {name} ORDER BY {ORDER[name]}")
    with pg.reading() as con:  # the app role; the policies scope the view to tenant default
        result = con.execute(f"SELECT * FROM {name} ORDER BY {ORDER[name]}")
        columns = [c for c, _ in result.description]
        rows = result.fetchall()
    assert columns == list(duck.columns)
    assert len(rows) == len(duck) > 0
    skip = NOT_COPIED.get(name, set())
    keep = [i for i, c in enumerate(columns) if c not in skip]
    if name == "events":  # the fork event's id differs: order by what was copied
        rows = [r for r in rows if r[columns.index("type")] != "fork"]
        duck = duck[duck.type != "fork"]
    theirs = sorted((tuple(normal(r[i]) for i in keep) for r in rows), key=repr)
    ours = sorted((tuple(normal(v) for v in r)
                   for r in duck.iloc[:, keep].itertuples(index=False)), key=repr)
    assert theirs == ours
    assert {r[0] for r in rows} == {"default"}  # tenant other's rows are not there


@pytest.mark.parametrize("name", ["costs", "tool_calls", "turns"])
def test_export_parquet_writes_the_same_file_from_postgres(both, tmp_path, name):
    import pyarrow.parquet as pq

    from forge_jupyter.export import export_parquet

    forge, pg, _ = both
    ours = pq.read_table(export_parquet(forge.store, name, tmp_path / "duck.parquet"))
    theirs = pq.read_table(export_parquet(pg, name, tmp_path / "pg.parquet"))
    assert theirs.schema == ours.schema
    assert theirs.sort_by("message_id" if name == "turns" else "part_id").equals(
        ours.sort_by("message_id" if name == "turns" else "part_id"))


def test_names_sort_as_on_duckdb_in_a_database_with_a_language_collation(pg_cluster):
    """A DBA's database sorts text by a language's rules ('alpha' before 'Zeta'); the frames
    still order names byte by byte, as DuckDB does."""
    import secrets

    import psycopg

    from forge_jupyter.message import Message, StepFinishPart, now
    from forge_jupyter.store.ops import AppendMessage, PutMessage, PutPart
    from tests.pg_cluster import PgDatabase

    name = f"forge_icu_{secrets.token_hex(3)}"
    password = secrets.token_urlsafe(16)
    pg_cluster.admin_sql(
        f'CREATE ROLE "{name}_owner" LOGIN PASSWORD \'{password}\' NOSUPERUSER NOBYPASSRLS',
        f'CREATE DATABASE "{name}" OWNER "{name}_owner" TEMPLATE template0 ENCODING \'UTF8\' '
        "LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'")
    db = PgDatabase(pg_cluster, name, f"{name}_owner", password)
    try:
        app = db.create_app_role()
        migrate(db.owner_dsn, (app.name,))
        with psycopg.connect(db.owner_dsn) as con:  # the premise: this database sorts so
            assert [r[0] for r in con.execute(
                "SELECT x FROM (VALUES ('Zeta'), ('alpha')) t(x) ORDER BY x")] == ["alpha", "Zeta"]
        with PostgresStore(app.dsn, tenant_id="default") as pg:
            session = pg.create_session(SessionInfo())
            for model in ("alpha/m", "Zeta/m", "beta/m"):
                m = Message(session_id=session.id, role="assistant", model=model,
                            agent=model.upper(), status="completed", completed_at=now())
                pg.write([PutMessage(m), PutPart(StepFinishPart(session_id=session.id,
                                                                message_id=m.id)),
                          AppendMessage(session.id, m.id)])
            assert list(frames.costs(pg, by="model")["model"]) == ["Zeta/m", "alpha/m", "beta/m"]
            assert list(frames.costs(pg, by="agent")["agent"]) == ["ALPHA/M", "BETA/M", "ZETA/M"]
            assert list(frames.sessions(pg)["models"]) == ["alpha/m, Zeta/m, beta/m"]
    finally:
        pg_cluster.drop_database(db)
