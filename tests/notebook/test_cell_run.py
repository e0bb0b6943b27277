"""notebook_run (issue 28, item 3) at the comm: a real kernel whose ``%%forge`` cells are answered
by the fake model server, and this test as the page — it answers ``read-cells`` with the cell
to run, approves asks, and receives ``cell-outputs`` as labextension/src/cells/run.ts does (what
the page shows and saves: tests/browser/test_cell_run_browser.py). Also the guard that keeps
code a tool runs from starting forge again, however it is spelled (tools/nested.py)."""

from __future__ import annotations

from typing import Any

import pytest

from forge_jupyter.testing import Turn, tool_call
from tests.notebook.panel_kernel import PanelKernel, tool_results


@pytest.fixture(scope="module")
def kernel(model_server, tmp_path_factory):
    root = tmp_path_factory.mktemp("run")
    k = PanelKernel({"FORGE_MODEL": "openai/gpt-4o-mini", "FORGE_API_BASE": model_server.openai_base,
                     "FORGE_API_KEY": "sk-fake", "FORGE_DB": str(root / "forge.duckdb"),
                     "FORGE_WIDGET": "off"}, root)
    loaded = k.run("%load_ext forge_jupyter\n%config Forge.cell_run_wait = 1.0")
    assert loaded.status == "ok", loaded.text
    yield k
    k.close()


def _cell(cell_id: str, source: str, tags: list[str] | None = None) -> dict[str, Any]:
    return {"id": cell_id, "cell_type": "code", "source": source, "outputs": [],
            "execution_count": None, "metadata": {"tags": tags} if tags else {}}


class Page:
    """The page: a notebook of ``cells``; inserts get the id ``new-1``; asks are answered
    ``answer`` (and kept); the outputs the kernel sends are kept by cell."""

    def __init__(self, kernel: PanelKernel, comm_id: str, cells: list[dict[str, Any]],
                 answer: str = "once") -> None:
        self.kernel, self.comm_id, self.cells, self.answer = kernel, comm_id, cells, answer
        self.asks: list[dict[str, Any]] = []
        self.outputs: dict[str, list[dict[str, Any]]] = {}  # cell id → each cell-outputs

    def __call__(self, comm_id: str, data: dict[str, Any]) -> None:
        if comm_id != self.comm_id:
            return
        for op in data.get("ops", []):
            if op["op"] == "approval":
                self.asks.append(op["request"])
                self.kernel.send(comm_id, {"type": "approve", "request_id": op["request"]["id"],
                                           "answer": self.answer}, wait=False)
        if data["kind"] == "edit-cell":
            self.cells.append(_cell("new-1", data["source"]))
            self.kernel.send(comm_id, {"type": "cell-edited", "request_id": data["request_id"],
                                       "ok": True, "error": "", "cell_id": "new-1", "index": 0,
                                       "staged": True}, wait=False)
        elif data["kind"] == "read-cells":
            wanted = set(data.get("image_ids") or [c["id"] for c in self.cells])
            self.kernel.send(comm_id, {"type": "cells", "request_id": data["request_id"],
                                       "cells": [c for c in self.cells if c["id"] in wanted]},
                             wait=False)
        elif data["kind"] == "cell-outputs":
            self.outputs.setdefault(data["cell_id"], []).append(data)


def _ended(kernel: PanelKernel, page: Page, cell_id: str, timeout: float = 20) -> list[dict]:
    """The outputs the page holds once the run of ``cell_id`` ended (it may have already)."""
    def ended(_msg: Any = None) -> bool:
        return any(not o["running"] for o in page.outputs.get(cell_id, []))

    if not ended():
        kernel.pump(ended, timeout=timeout, on_comm=page)
    return page.outputs[cell_id][-1]["outputs"]


def _text(outputs: list[dict[str, Any]]) -> str:
    return "".join(o.get("text", "") + str(o.get("data", {}).get("text/plain", ""))
                   + o.get("ename", "") for o in outputs)


def test_a_cell_it_inserted_runs_like_python_its_outputs_sent_to_the_cell(kernel, server, panel):
    assert kernel.run('%config Forge.permissions = ["notebook_*=allow"]').status == "ok"
    server.add(Turn([tool_call("notebook_insert", {"source": "import sys\nprint('hello')\n"
                                                   "print('warn', file=sys.stderr)\n6 * 7"})]),
               Turn([tool_call("notebook_run", {"cell_id": "new-1"})]),
               Turn([tool_call("notebook_read", {})]), Turn.text("Done."))
    page = Page(kernel, panel, [])
    try:
        assert kernel.run("%%forge\nWrite and run a cell.", on_comm=page).status == "ok"
    finally:
        kernel.run("%config Forge.permissions = []")
    [listing] = tool_results(server)
    assert "id new-1 · ran by notebook_run" in listing and "ok" in listing, listing
    result = [m["content"] for m in server.requests[-2].messages if m["role"] == "tool"][-1]
    assert "Ran cell new-1" in result and "hello" in result and "42" in result, result
    assert page.asks == []  # its own cell, unchanged, under an allow rule: like python
    last = page.outputs["new-1"][-1]
    assert last["running"] is False
    kinds = [(o["output_type"], o.get("name")) for o in last["outputs"]]
    assert kinds == [("stream", "stdout"), ("stream", "stderr"), ("execute_result", None)], kinds
    assert last["outputs"][2]["data"]["text/plain"] == "42"


def test_the_persons_cell_and_a_marked_one_ask_with_their_source_even_where_allowed(
        kernel, server, panel):
    assert kernel.run('%config Forge.permissions = ["notebook_*=allow"]').status == "ok"
    server.add(Turn([tool_call("notebook_run", {"cell_id": "theirs"}, id="a"),
                     tool_call("notebook_run", {"cell_id": "marked"}, id="b")]),
               Turn.text("Asked."))
    page = Page(kernel, panel, [_cell("theirs", "total = 1 + 1\ntotal"),
                                _cell("marked", "print('expensive')", ["forge-ask-before-run"])],
                answer="deny")
    try:
        assert kernel.run("%%forge\nRun both.", on_comm=page).status == "ok"
    finally:
        kernel.run("%config Forge.permissions = []")
    theirs, marked = tool_results(server)
    shown = {a["input"]["cell_id"]: a for a in page.asks}
    assert shown["theirs"]["input"]["source"] == "total = 1 + 1\ntotal"
    assert "not one you wrote" in shown["theirs"]["rule"]
    assert "forge-ask-before-run" in shown["marked"]["rule"]
    assert "denied" in theirs and "denied" in marked
    assert page.outputs == {}  # nothing ran
    assert "total" not in kernel.run("print('total' in dir())").text.replace("False", "")


def test_a_long_run_answers_still_running_and_its_outputs_land_later(kernel, server, panel):
    code = "import time\nprint('first')\ntime.sleep(2)\nprint('second')"
    server.add(Turn([tool_call("notebook_run", {"cell_id": "slow"})]), Turn.text("Waiting."))
    page = Page(kernel, panel, [_cell("slow", code)])
    assert kernel.run("%%forge\nRun the slow cell.", on_comm=page).status == "ok"
    [result] = tool_results(server)
    assert "still running after 1 s" in result and "first" in result, result
    assert "second" not in result
    landed = _text(_ended(kernel, page, "slow"))
    assert "first" in landed and "second" in landed


def test_stop_interrupts_a_running_cell(kernel, server, panel):
    # a loop of Python: the interrupt lands between its steps (a single C call ends first)
    code = "import time\nprint('started')\nfor _ in range(300):\n    time.sleep(0.1)\nprint('never')"
    server.add(Turn([tool_call("notebook_run", {"cell_id": "long"})]), Turn.text("Waiting."))
    page = Page(kernel, panel, [_cell("long", code)])
    assert kernel.run("%config Forge.cell_run_wait = 60").status == "ok"
    stopped = []

    def on_comm(comm_id: str, data: dict[str, Any]) -> None:
        page(comm_id, data)
        outs = page.outputs.get("long", [])
        if not stopped and outs and "started" in _text(outs[-1]["outputs"]):
            stopped.append(True)
            kernel.send(panel, {"type": "stop", "session_id": "", "turn_id": data.get(
                "turn_id", "") or _turn_id(kernel, panel)}, wait=False)

    try:
        kernel.run("%%forge\nRun the long cell.", on_comm=on_comm, timeout=30)
    finally:
        kernel.run("%config Forge.cell_run_wait = 1.0")
    last = _ended(kernel, page, "long", 15)
    assert "KeyboardInterrupt" in _text(last) and "never" not in _text(last)


def _turn_id(kernel: PanelKernel, comm_id: str) -> str:
    return next(m["turn_id"] for m in reversed(kernel.received[comm_id]) if m["kind"] == "turn")


def test_an_unknown_cell_id_is_a_clear_error(kernel, server, panel):
    server.add(Turn([tool_call("notebook_run", {"cell_id": "gone-1"})]), Turn.text("Gone."))
    page = Page(kernel, panel, [_cell("other", "1")])
    assert kernel.run("%%forge\nRun it.", on_comm=page).status == "ok"
    [result] = tool_results(server)
    assert "no cell with id 'gone-1'" in result and "notebook_read" in result


NESTED = [
    "get_ipython().run_cell('%%forge\\nagain')",
    "get_ipython().run_cell_magic( \"forge\" , '', 'again')",
    "get_ipython().run_line_magic('forge', 'compact')",
    "exec(get_ipython().transform_cell('%forge stop'))",
    "exec(\"get_ipython().run_line_magic('for' + 'ge', 'new')\")",
    "import forge_jupyter\nforge_jupyter.Forge(model='openai/x').session('s').prompt('again')",
]


def test_code_a_tool_runs_cannot_start_forge_again_however_spelled(kernel, server, panel):
    calls = [tool_call("python", {"code": c}, id=f"p{i}") for i, c in enumerate(NESTED)]
    server.add(Turn([tool_call("notebook_insert", {"source": "%%forge\nanother turn"})]),
               Turn(calls), Turn([tool_call("notebook_run", {"cell_id": "new-1"})]),
               Turn.text("Refused."))
    assert kernel.run('%config Forge.permissions = ["*=allow"]').status == "ok"
    asked = len(server.requests)
    page = Page(kernel, panel, [])
    try:
        assert kernel.run("%%forge\nTry to nest.", on_comm=page).status == "ok"
    finally:
        kernel.run("%config Forge.permissions = []")
    requests = server.requests
    python_results = [m["content"] for m in requests[-2].messages if m["role"] == "tool"][-len(NESTED):]
    for code, result in zip(NESTED, python_results, strict=True):
        assert "forge cannot" in result and "the python tool runs" in result, (code, result)
    [run_result] = tool_results(server)
    assert "forge cannot run a %%forge cell from code the notebook_run tool runs" in run_result
    assert len(requests) - asked == 4  # no other turn asked the model anything
