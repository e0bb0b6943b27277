"""Restart & Run All in a real JupyterLab: the %%forge cell replays its recorded turn (the cell
id and the notebook path come from JupyterLab itself), its record says "Replayed" with the
date and model, and the variable its python call built exists again — no model request."""

from __future__ import annotations

import pytest

from forge_jupyter.testing import Turn, text, tool_call
from tests.browser.lab_helpers import NotebookPage, forge_cell

pytestmark = pytest.mark.slow

LOAD = '%load_ext forge_jupyter\n%config Forge.permissions = ["python:*=allow"]'


def test_restart_and_run_all_replays_and_the_record_says_so(page, lab, script):
    script.add([text("Setting r."), tool_call("python", {"code": "r = 6 * 7"})],
               Turn.text("r is 42."))
    lab.write_notebook("replayed.ipynb", [LOAD, forge_cell("Set r."), "print('r =', r)"])
    nb = NotebookPage(page, lab, "replayed.ipynb").open()
    nb.run_all()
    nb.wait_idle(2)
    asked = len(script.requests)
    assert asked == 2
    lab.shutdown_kernels()  # a new kernel, as Restart & Run All gives

    nb = NotebookPage(page, lab, "replayed.ipynb").open()
    nb.run_all()
    nb.wait_idle(2)
    assert len(script.requests) == asked  # no model request
    record = nb.cell(1).inner_text()
    assert "Replayed — recorded" in record and "openai/fake-model" in record, record
    assert "r is 42." in record
    printed = "".join(o.get("text", "") for o in nb.outputs(2))
    assert printed.strip() == "r = 42"
    nb.screenshot("replayed-record")
    assert not page.forge_errors
