"""Fixtures of the history-as-data tests: the scripted run (frames_helpers.script) once per
backend, a shared fake model server, and fresh Forges."""

from __future__ import annotations

import pytest

from forge_jupyter import Forge
from forge_jupyter.store.inmemory.store import MemoryDatabase, MemoryStore
from forge_jupyter.testing import FakeModelServer
from tests.frames.frames_helpers import Run, make_forge, script


@pytest.fixture(scope="session")
def server():
    with FakeModelServer() as server:
        yield server


@pytest.fixture(scope="session", params=["memory", "duckdb"])
def run(request, server, tmp_path_factory) -> Run:
    if request.param == "duckdb":
        path = tmp_path_factory.mktemp("frames") / "forge.duckdb"
        forge, other = make_forge(server, str(path)), make_forge(server, str(path), tenant="other")
    else:
        path = None
        shared = MemoryDatabase()
        forge = make_forge(server, MemoryStore(shared))
        other = make_forge(server, MemoryStore(shared, tenant_id="other"))
    result = Run(request.param, forge, other, path=path)
    result.sessions = script(server, forge, other)
    yield result
    forge.close()
    other.close()


@pytest.fixture
def fresh(server, tmp_path):
    """A factory of empty Forges (``"memory"`` or ``"duckdb"``) on the shared fake server."""
    made: list[Forge] = []

    def make(kind: str, **kw) -> Forge:
        db = str(tmp_path / f"fresh-{len(made)}.duckdb") if kind == "duckdb" else ":memory:"
        forge = make_forge(server, db, **kw)
        made.append(forge)
        return forge

    yield make
    for f in made:
        f.close()
