"""A server whose store file does not exist yet (no kernel has written one): empty answers, no
error, and no read creates the file — until a kernel does, which the next request shows."""

from __future__ import annotations

from pathlib import Path

import pytest
from traitlets.config import Config

from forge_jupyter.message import SessionInfo
from forge_jupyter.store.duckdb.store import DuckDBStore
from tests.server.api_helpers import get, refused

EMPTY = {"cost": 0, "input_tokens": 0, "output_tokens": 0, "turns": 0, "steps": 0,
         "unpriced_steps": 0}


@pytest.fixture(params=["configured", "default", "memory"])
def setting(request, tmp_path, monkeypatch) -> tuple[str, Path | None]:
    monkeypatch.delenv("FORGE_DB", raising=False)
    monkeypatch.delenv("FORGE_TENANT", raising=False)
    if request.param == "configured":
        return str(tmp_path / "not" / "yet" / "forge.duckdb"), tmp_path / "not"
    if request.param == "memory":
        return ":memory:", None
    return "", None  # the kernels' default: ~/.forge/forge.duckdb, HOME a temporary folder


@pytest.fixture
def jp_server_config(setting) -> Config:
    db, _ = setting
    forge = {"db": db} if db else {}
    return Config({"ServerApp": {"jpserver_extensions": {"forge_jupyter": True}},
                   "Forge": forge})


async def test_a_missing_store_reads_as_empty_and_is_not_created(jp_fetch, jp_home_dir, setting):
    db, folder = setting
    assert await get(jp_fetch, "sessions") == {"sessions": [], "next_cursor": None}
    assert await get(jp_fetch, "sessions", q="anything") == {"sessions": [], "next_cursor": None}
    costs = await get(jp_fetch, "costs", notebook="a.ipynb")
    assert costs == {"session": None, "notebook": EMPTY, "today": EMPTY, "all": EMPTY}
    sid = SessionInfo().id
    for path in (("sessions", sid), ("sessions", sid, "messages")):
        await refused(jp_fetch, 404, *path)
    await refused(jp_fetch, 404, "costs", params={"session": sid})
    await refused(jp_fetch, 400, "sessions", params={"limit": "0"})  # still checked

    if folder is not None:  # nothing was created on the way: not the file, not its folder
        assert not folder.exists()
    assert not (Path(jp_home_dir) / ".forge").exists()

    if db and db != ":memory:":  # a kernel writes the file: the next request sees it
        store = DuckDBStore(db, tenant_id="default")
        made = store.create_session(SessionInfo(name="first"))
        listed = await get(jp_fetch, "sessions")
        assert [s["id"] for s in listed["sessions"]] == [made.id]
        assert listed["sessions"][0]["cost"] == 0 and listed["sessions"][0]["messages"] == 0
