"""How a %%forge cell fails: a model failure is a failing cell (named, saying what to do next),
an interrupt one short KeyboardInterrupt — in a real kernel, under nbclient and papermill, the
real litellm talking to the fake model server."""

from __future__ import annotations

import re
import sys
import time

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from forge_jupyter.testing import Turn, delay, text
from tests.notebook.nb_kernel import Result, collect, forge_kernel
from tests.notebook.replay_nb import LOAD

FAST_RETRY = ("from forge_jupyter.session.retry import RetryPolicy\n"
              "get_ipython()._forge_magics.controller.forge.retry = "
              "RetryPolicy(max_attempts=5, base_delay=0.01, max_delay=0.05)")


@pytest.fixture(scope="module")
def kernel(model_server, tmp_path_factory):
    k = forge_kernel(model_server.openai_base, tmp_path_factory.mktemp("nb"))
    assert k.run(FAST_RETRY).status == "ok"
    yield k
    k.close()


def _last(kernel) -> str:
    r = kernel.run("m = get_ipython()._forge_magics.controller.current().last\n"
                   "print(m.role, m.status, m.error.type if m.error else None)")
    return r.stdout.strip()


def test_five_server_errors_fail_the_cell_naming_the_error_and_the_next_step(kernel, server):
    server.add(*[Turn.error(500, "upstream down")] * 5)
    r = kernel.run("%%forge\nhello")
    assert r.status == "error" and r.error is not None, r.text
    assert r.error["ename"] == "ForgeModelError"
    evalue = r.error["evalue"]
    assert "gave up after 5 attempts" in evalue and "HTTP 500" in evalue and "Next:" in evalue
    assert "\n" not in evalue
    assert len(r.error["traceback"]) == 1  # the message, not forge's frames
    assert r.results == []  # no Out[n] reading "(no text)"
    assert "✗ error: gave up after 5 attempts" in r.stdout  # the record still shows the turn
    assert _last(kernel) == "assistant error InternalServerError"  # and the store holds it


def test_a_refused_key_fails_the_cell_saying_which_setting_to_check(kernel, server):
    server.add(Turn.error(401, "Incorrect API key provided"))
    before = len(server.requests)
    r = kernel.run("%%forge\nhello again")
    assert r.status == "error" and r.error["ename"] == "ForgeModelError", r.text
    assert "refused the API key" in r.error["evalue"] and "FORGE_API_KEY" in r.error["evalue"]
    assert len(server.requests) == before + 1  # a refused key is not retried
    assert _last(kernel).startswith("assistant error")


def test_an_answer_after_a_failure_is_a_normal_cell_again(kernel, server):
    server.add(Turn.text("Back."))
    r = kernel.run("%%forge\nare you there?")
    assert r.status == "ok" and r.error is None, r.text
    assert "Back." in r.results[0]["text/plain"]


def test_an_interrupted_cell_shows_a_short_keyboard_interrupt(kernel, server):
    """Before: 116–143 lines of RuntimeError → CancelledError → KeyboardInterrupt through
    litellm and aiohttp, under a record that already said "stopped"."""
    server.add(Turn([text("The first half."), delay(8), text(" Never shown.")]))
    before = len(server.requests)
    msg_id = kernel.kc.execute("%%forge\ngo slowly")
    deadline = time.monotonic() + 30
    while len(server.requests) == before:
        assert time.monotonic() < deadline, "the prompt never reached the server"
        time.sleep(0.05)
    time.sleep(0.5)  # mid-stream: the first half has arrived
    kernel.km.interrupt_kernel()
    r = Result(status="?")
    while True:
        msg = kernel.kc.get_iopub_msg(timeout=30)
        if msg["parent_header"].get("msg_id") == msg_id and collect(r, msg):
            break
    assert r.error is not None and r.error["ename"] == "KeyboardInterrupt", r.text
    lines = "\n".join(r.error["traceback"]).splitlines()
    assert len(lines) <= 3, lines
    assert "The first half." in r.stdout and "stopped" in r.stdout  # the record says so
    assert _last(kernel) == "assistant aborted aborted"
    assert kernel.run("1 + 1").results[0]["text/plain"] == "2"  # the kernel carries on


def _notebook_of(*sources: str):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in (LOAD, *sources)]
    return nb


def _env(root, api_base: str) -> dict[str, str]:
    return {"FORGE_MODEL": "openai/gpt-4o-mini", "FORGE_DB": str(root / "forge.duckdb"),
            "FORGE_WIDGET": "off", "FORGE_API_KEY": "sk-fake", "FORGE_API_BASE": api_base}


def test_run_all_stops_at_a_failed_turn_under_nbclient(tmp_path, fake_model_server):
    import os

    fake_model_server.add(Turn.error(401, "Incorrect API key provided"))
    nb = _notebook_of("%%forge\nSummarise the data.", "print('after')")
    client = NotebookClient(nb, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}})
    client.km = client.create_kernel_manager()
    client.km.kernel_spec.argv[0] = sys.executable
    with pytest.raises(CellExecutionError) as raised:
        client.execute(env={**os.environ, **_env(tmp_path, fake_model_server.openai_base)})
    assert raised.value.ename == "ForgeModelError"
    assert "refused the API key" in raised.value.evalue
    assert nb.cells[2].outputs == []  # the next cell never ran
    [error] = [o for o in nb.cells[1].outputs if o.output_type == "error"]
    assert error.ename == "ForgeModelError"


def test_papermill_names_the_model_failure_in_its_exception(tmp_path, fake_model_server, monkeypatch):
    papermill = pytest.importorskip("papermill")
    for key, value in _env(tmp_path, fake_model_server.openai_base).items():
        monkeypatch.setenv(key, value)
    fake_model_server.add(Turn.error(401, "Incorrect API key provided"))
    source = tmp_path / "analysis.ipynb"
    nbformat.write(_notebook_of("%%forge\nSummarise the data."), source)
    with pytest.raises(papermill.PapermillExecutionError) as raised:
        papermill.execute_notebook(str(source), str(tmp_path / "out.ipynb"), kernel_name="python3",
                                   cwd=str(tmp_path), progress_bar=False)
    said = re.sub(r"\x1b\[[0-9;]*m", "", str(raised.value))
    assert "ForgeModelError" in said and "refused the API key" in said, said
