"""A poisoned session set aside, as the cell widget shows it (session/poisoned.py): a real
kernel, this test as the widget frontend (kernel_frontend.py). The notice arrives in the
view's ops like any notice; the record left in the cell keeps a line naming the old session."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator

import pytest

from forge_jupyter.testing import FakeModelServer, Turn, tool_call
from tests.browser.kernel_frontend import KernelFrontend

pytestmark = pytest.mark.slow


@pytest.fixture
def frontend(tmp_path) -> Iterator[tuple[KernelFrontend, FakeModelServer]]:
    with FakeModelServer() as server:
        env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True",
               "FORGE_MODEL": "openai/fake-model", "FORGE_API_BASE": server.openai_base,
               "FORGE_API_KEY": "sk-fake", "FORGE_DB": str(tmp_path / "forge.duckdb"),
               "FORGE_SESSION_MAX_AGE": "1s", "FORGE_REPLAY": "off",
               "JPY_SESSION_NAME": str(tmp_path / "prices.ipynb")}
        env.pop("FORGE_WIDGET", None)
        fe = KernelFrontend(env=env, cwd=str(tmp_path))
        try:
            fe.run("%load_ext forge_jupyter")
            yield fe, server
        finally:
            fe.close()


def test_the_widget_says_so_and_the_record_keeps_it(frontend):
    fe, server = frontend
    server.add(*[Turn([tool_call("fetch_price", {"ticker": t})]) for t in "ABC"],
               Turn.text("I give up."))
    fe.run("%%forge\nPrices?")
    fe.run("print(get_ipython()._forge_magics.controller.current_session_id)")
    old = "".join(fe.stdout).strip().splitlines()[-1]
    time.sleep(1.6)
    server.add(Turn.text("Starting over."))
    fe.outputs.clear()
    fe.run("%%forge\nLet's get those prices.")

    notices = [op["message"] for r in fe.received for op in r.content.get("ops", ())
               if op["op"] == "notice"]
    assert len(notices) == 1 and notices[0].startswith("Started a fresh session")
    assert f"session {old} had been idle" in notices[0]
    records = [o["data"] for o in fe.outputs if o["type"] == "update_display_data"
               and "text/html" in o["data"]]
    assert records, "the widget was not replaced by its record"
    line = (rf"↺ New session — {old} was set aside \(idle for \d seconds?, its last 3 tool "
            rf"calls failed\); it is still readable: %forge use {old}")
    assert re.search(line, records[-1]["text/plain"])
    assert "was set aside" in records[-1]["text/html"]
