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
from frames_helpers import make_forge, script

from forge_jupyter import frames
from forge_jupyter.model import SessionInfo
from forge_jupyter.store.postgres import PostgresStore
from forge_jupyter.store.postgres_schema import migrate
from forge_jupyter.store.views import VIEW_NAMES


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
