"""Shared fixtures: the fake model server (real HTTP on loopback) and Forge factories."""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pytest

from forge_jupyter import Forge
from forge_jupyter.session.retry import RetryPolicy

# pg_cluster: the throwaway PostgreSQL cluster (session fixture `pg_cluster`, `pg_database`).
pytest_plugins = ["forge_jupyter.testing.fixtures", "tests.pg_cluster"]

FAST_RETRY = RetryPolicy(max_attempts=4, base_delay=0.01, max_delay=0.05)

# Tests that start or need the throwaway PostgreSQL cluster without asking for its fixture.
POSTGRES_MODULES = {"test_pg_cluster.py"}


def needs_postgres(item: pytest.Item) -> bool:
    """The test uses the run's PostgreSQL cluster: through a fixture, as the ``postgres``
    parameter of a backend (tests/contract), or by starting clusters of its own."""
    if "pg_cluster" in getattr(item, "fixturenames", ()):
        return True
    callspec = getattr(item, "callspec", None)
    if callspec is not None and "postgres" in callspec.params.values():
        return True
    return item.path.name in POSTGRES_MODULES


BROWSER_TESTS = Path(__file__).resolve().parent / "browser"


def xdist_group(item: pytest.Item) -> str:
    """The unit ``pytest -n auto --dist loadgroup`` hands to one worker whole: a module, so its
    module fixtures (a kernel, a server) start once per run as without xdist; and all of
    tests/browser, so one JupyterLab and one Chromium serve the run, not one per worker."""
    if BROWSER_TESTS in item.path.parents:
        return "browser"
    return item.nodeid.split("::")[0]  # its module, e.g. tests/notebook/test_replay.py


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the xdist_group marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The ``browser`` and ``postgres`` markers by the fixtures a test needs, so the inner loop
    (docs/testing.md) deselects them without every module having to say so; and the
    ``xdist_group`` of each test (``xdist_group`` above)."""
    for item in items:
        if {"lab_server", "browser"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.browser)  # tests/browser/conftest.py
        if needs_postgres(item):
            item.add_marker(pytest.mark.postgres)
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(xdist_group(item)))


@pytest.fixture(autouse=True)
def no_event_loop_left_running(request: pytest.FixtureRequest) -> None:
    """A test outside tests/browser starts with no asyncio loop marked running in the main
    thread. Sync Playwright leaves one marked for as long as it lives, so its fixtures are
    scoped to tests/browser (its conftest.py); this says so plainly instead of letting a
    later ``asyncio.run()`` fail with "cannot be called from a running event loop"."""
    loop = asyncio._get_running_loop()
    if loop is not None and BROWSER_TESTS not in request.node.path.parents:
        pytest.fail(f"an asyncio loop is still marked running in the main thread ({loop!r}): "
                    "a fixture that outlives its package left it (sync Playwright does, so "
                    "keep browser fixtures scope='package' in tests/browser/conftest.py)")


@pytest.fixture(scope="session", autouse=True)
def memory_out_of_the_tree(tmp_path_factory):
    """A Forge made without ``memory_dir`` keeps its long-term memory (compaction's daily logs)
    in a temporary folder, not in ``.forge/memory`` of the directory the tests run from."""
    os.environ.setdefault("FORGE_MEMORY_DIR", str(tmp_path_factory.mktemp("forge-memory")))


@pytest.fixture(scope="session")
def migrated_duckdb(tmp_path_factory) -> Callable[[Path], Path]:
    """Puts an empty, migrated DuckDB store file at a path: a copy of one migrated once a run.
    The migration took 0.2-2 s a test (more under load), a copy takes milliseconds; the test
    still gets a real file of its own, with nothing in it but ``forge_schema``'s version."""
    from forge_jupyter.store.duckdb.store import DuckDBStore

    template = tmp_path_factory.mktemp("duckdb-template") / "forge.duckdb"
    DuckDBStore(template, tenant_id="default").close()  # closed: checkpointed, no .wal beside it

    def put(path: Path) -> Path:
        shutil.copyfile(template, path)
        return path

    return put


@pytest.fixture
def make_forge(fake_model_server, tmp_path, migrated_duckdb):
    """Forge objects wired to the fake server; ``db="duckdb"`` uses a real file in tmp_path
    (migrated already, ``migrated_duckdb``)."""
    made: list[Forge] = []

    def make(db: str = ":memory:", protocol: str = "openai", model: str | None = None, **kw) -> Forge:
        kwargs = fake_model_server.model_kwargs(protocol)
        if model is not None:
            kwargs["model"] = model
        kw.setdefault("retry", FAST_RETRY)
        kw.setdefault("builtin_tools", False)  # core tests pin the loop, not the builtins
        kw.setdefault("memory_dir", tmp_path / "memory")  # compaction logs there, not in cwd
        path = db
        if db == "duckdb":
            file = tmp_path / "forge.duckdb"
            path = str(file if file.exists() else migrated_duckdb(file))
        forge = Forge(db=path, **kwargs, **kw)
        made.append(forge)
        return forge

    yield make
    for f in made:
        f.close()


@pytest.fixture
def server(fake_model_server):
    return fake_model_server
