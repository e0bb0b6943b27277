"""The REST API's tests: pytest-jupyter's server fixtures, and a history written once per module
through the real Forge (litellm over loopback HTTP to the fake model server) and the store's
public API into a real DuckDB file shared by two tenants.

    alice (the server's tenant)
      analysis  notebook work/analysis.ipynb: a tool call, a second prompt, a manual
                compaction that keeps the last turn, a prompt after it
      fork      a fork of analysis, answered once more
      odd       a title full of SQL and LIKE metacharacters and non-ASCII text
      long      230 messages written through the store's API; one says "needle-in-text"
      gone      deleted
    bob (another tenant, same file)
      secret    titled like alice's odd session, text "café for bob only"
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pytest

# pytest-jupyter's fixtures and its hooks that run `async def` tests, for this folder only
from pytest_jupyter.jupyter_server import *  # noqa: F403
from traitlets.config import Config

from forge_jupyter import Forge
from forge_jupyter.message import Message, SessionInfo, TextPart, now
from forge_jupyter.session.retry import RetryPolicy
from forge_jupyter.store.duckdb.store import DuckDBStore
from forge_jupyter.store.ops import AppendMessage, PutMessage, PutPart
from forge_jupyter.testing import FakeModelServer, Turn, tool_call
from tests.server.api_helpers import LONG, NOTEBOOK, ODD_TITLE, OTHER, TENANT, words

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

@dataclass
class History:
    path: Path
    ids: dict[str, str] = field(default_factory=dict)  # name → session id (both tenants)

    def store(self, tenant: str = TENANT) -> DuckDBStore:
        return DuckDBStore(self.path, tenant_id=tenant)


def make_forge(server: FakeModelServer, path: Path, tenant: str) -> Forge:
    forge = Forge(db=str(path), tenant=tenant, builtin_tools=False, load_plugins=False,
                  retry=RetryPolicy(max_attempts=2, base_delay=0.01, max_delay=0.02),
                  **server.model_kwargs("openai", "gpt-4o-mini"))

    @forge.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    return forge


def write_long(store: DuckDBStore, name: str, count: int) -> str:
    """A session of ``count`` finished messages (a text part each), through the store's API."""
    session = store.create_session(SessionInfo(name=name))
    ops: list = []
    for i in range(count):
        m = Message(session_id=session.id, role="user" if i % 2 == 0 else "assistant",
                    status="completed", completed_at=now())
        text = "the needle-in-text is here" if i == 101 else f"line {i} of the long session"
        ops += [PutMessage(m), PutPart(TextPart(session_id=session.id, message_id=m.id,
                                                text=text, time_start=now(), time_end=now())),
                AppendMessage(session.id, m.id)]
    store.write(ops)
    return session.id


@pytest.fixture(scope="module")
def model_server():
    with FakeModelServer() as server:
        yield server


@pytest.fixture(scope="module")
def history(model_server, tmp_path_factory) -> History:
    h = History(tmp_path_factory.mktemp("server") / "forge.duckdb")
    server = model_server
    alice, bob = make_forge(server, h.path, TENANT), make_forge(server, h.path, OTHER)
    try:
        analysis = alice.session("analysis", metadata={"notebook": NOTEBOOK})
        origin = {"notebook": NOTEBOOK, "cell_id": "c1", "execution_count": 1}
        server.add(Turn([tool_call("add", {"a": 2, "b": 3})], usage=(120, 20)),
                   Turn.text(words("five"), usage=(150, 12)))
        analysis.prompt("What is 2+3?", origin=origin)
        server.add(Turn.text(words("second"), usage=(200, 15)))
        analysis.prompt("Say more.", origin=origin | {"cell_id": "c2"})
        server.add(Turn.text("## Goal\n" + words("summary"), usage=(260, 40)))
        analysis.compact()
        server.add(Turn.text(words("after"), usage=(90, 9)))
        analysis.prompt("And after the compaction?", origin=origin | {"cell_id": "c3"})

        fork = analysis.fork(name="fork")
        server.add(Turn.text(words("forked"), usage=(110, 8)))
        fork.prompt("Continue in the fork.")

        odd = alice.session("odd")
        server.add(Turn.text(words("odd"), usage=(30, 3)))
        odd.prompt(ODD_TITLE)

        gone = alice.session("gone")
        server.add(Turn.text(words("gone"), usage=(30, 3)))
        gone.prompt("deleted soon: café")
        alice.flush()
        alice.delete_session(gone.id)

        secret = bob.session("secret")
        server.add(Turn.text(words("bob"), usage=(40, 4)))
        secret.prompt(ODD_TITLE + " café for bob only")
        alice.flush()
        bob.flush()
        h.ids = {"analysis": analysis.id, "fork": fork.id, "odd": odd.id, "gone": gone.id,
                 "secret": secret.id}
    finally:
        alice.close()
        bob.close()
    h.ids["long"] = write_long(h.store(), "long", LONG)
    return h


@pytest.fixture
def jp_server_config(history) -> Config:
    """The server of every test here: the extension on, the history's file, tenant alice."""
    return Config({
        "ServerApp": {"jpserver_extensions": {"forge_jupyter": True}},
        "Forge": {"db": str(history.path), "tenant": TENANT},
    })
