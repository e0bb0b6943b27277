"""The REST API over PostgreSQL: the side panel of a team whose kernels write one database.

The module's DuckDB history (conftest.py: two tenants, a compaction, a fork, odd titles, a long
session) is copied, verified row for row, into a throwaway PostgreSQL database (each tenant's
sessions into that tenant), and a real Jupyter server is configured with its URL and tenant
alice, as the kernels would be. Every answer must be the one the same reader gives over the
DuckDB file — but for what a copy cannot keep (a session's ``updated`` time, and so the list's
order) — and nothing of bob's may show. The server logs in as an application role that owns
nothing: the row-level security policies are what keep bob's rows out.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from traitlets.config import Config

from forge_jupyter import Forge
from forge_jupyter.server.reader import HistoryReader
from forge_jupyter.store.postgres.schema import migrate
from tests.server.api_helpers import OTHER, TENANT, every_page, get, refused

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def pg_url(history, pg_cluster):
    db = pg_cluster.create_database()
    app = db.create_app_role()
    migrate(db.owner_dsn, (app.name,))
    for tenant in (TENANT, OTHER):
        forge = Forge(db=str(history.path), tenant=tenant, builtin_tools=False,
                      load_plugins=False)
        try:
            forge.copy_to(app.dsn)
        finally:
            forge.close()
    yield app.dsn
    pg_cluster.drop_database(db)


@pytest.fixture
def jp_server_config(pg_url) -> Config:
    return Config({
        "ServerApp": {"jpserver_extensions": {"forge_jupyter": True}},
        "Forge": {"db": pg_url, "tenant": TENANT},
    })


@pytest.fixture(scope="module")
def duck(history):
    """The same reader over the DuckDB file: the answers PostgreSQL must give."""
    return HistoryReader(history.path, TENANT)


def same(a: object, b: object) -> bool:
    """Equal JSON, money to 1e-12 (PostgreSQL and DuckDB may sum in another order)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, float) and isinstance(b, float):
        return a == pytest.approx(b, rel=1e-12)
    return a == b


def without_updated(sessions: list[dict]) -> dict[str, dict]:
    return {s["id"]: {k: v for k, v in s.items() if k != "updated"} for s in sessions}


@pytest.mark.parametrize("q", [None, "café", "100%", "_", "SURE_THING", "needle-in-text",
                               "what is", "for bob only"])
async def test_the_session_list_and_its_search_are_the_duckdb_ones(jp_fetch, duck, history, q):
    params = {"q": q} if q is not None else {}
    seen, pages = await every_page(jp_fetch, ("sessions",), "sessions", limit=2, **params)
    expected = duck.sessions(q, None, 100)["sessions"]
    assert without_updated(seen) == without_updated(expected)
    assert len(seen) == len({s["id"] for s in seen})  # each once across the pages
    assert [s["updated"] for s in seen] == sorted((s["updated"] for s in seen), reverse=True)
    assert history.ids["secret"] not in {s["id"] for s in seen}
    if q is None:
        assert len(seen) == 4 and pages == 2


@pytest.mark.parametrize("name", ["analysis", "fork", "odd", "long"])
async def test_a_session_its_messages_and_costs_are_the_duckdb_ones(jp_fetch, duck, history,
                                                                     name):
    sid = history.ids[name]
    one = await get(jp_fetch, "sessions", sid)
    expected = duck.session(sid)
    one["session"].pop("updated")
    expected["session"].pop("updated")
    assert one == expected
    messages, _ = await every_page(jp_fetch, ("sessions", sid, "messages"), "messages",
                                   limit=100)
    expected_messages, start = [], 0
    while True:
        page = duck.messages(sid, start, 100)
        expected_messages += page["messages"]
        if page["next_cursor"] is None:
            break
        start = int(page["next_cursor"])
    assert messages == expected_messages
    first = await get(jp_fetch, "sessions", sid, "messages")
    assert first["boundaries"] == duck.messages(sid, 0, 200)["boundaries"]
    if name == "analysis":
        assert len(first["boundaries"]) == 1 and any(m["superseded"] for m in messages)
    costs = await get(jp_fetch, "costs", session=sid, notebook="work/analysis.ipynb", tz="UTC")
    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    assert same(costs, duck.costs(sid, "work/analysis.ipynb", today))
    assert costs["all"]["steps"] > costs["session"]["steps"] > (-1 if name == "long" else 0)


@pytest.mark.parametrize("name", ["secret", "gone"])
async def test_another_tenants_and_deleted_sessions_are_not_found(jp_fetch, history, name):
    sid = history.ids[name]
    for path in (("sessions", sid), ("sessions", sid, "messages")):
        await refused(jp_fetch, 404, *path)
    await refused(jp_fetch, 404, "costs", params={"session": sid})
