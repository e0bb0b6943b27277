"""notebook_run (issue 28, item 3) in JupyterLab and Chromium: while the ``%%forge`` cell keeps
the kernel busy, a cell the agent wrote runs, and its outputs show under that cell as they
come — past the wait the model is told "still running" and the rest lands later — and are saved
as the cell's own; a cell the person marked "ask before running" (its context menu) asks with
its source in the approval, and runs only once allowed."""

from __future__ import annotations

import re

from forge_jupyter.testing import Turn, tool_call
from tests.browser.lab_helpers import PANEL, NotebookPage, forge_cell, in_both_themes
from tests.browser.panel_page import PanelPage

LOAD = ("%load_ext forge_jupyter\n%config Forge.permissions = ['notebook_*=allow']\n"
        "%config Forge.cell_run_wait = 1.0")
SLOW = ("import time\nprint('made by forge')\nfor _ in range(25):\n    time.sleep(0.1)\n"
        "print('late')\nx * 6")


def _run_inserted(request) -> Turn:
    """Run the cell the previous step inserted (its id is in that step's result)."""
    result = next(m["content"] for m in reversed(request.messages) if m["role"] == "tool")
    cell_id = re.search(r"Inserted cell ([\w-]+)", result).group(1)
    return Turn([tool_call("notebook_run", {"cell_id": cell_id})])


def _result_of_step(page, script, asked: int, step: int) -> str:
    """The tool result the model's request number ``asked + step`` carried (waited for)."""
    while len(script.requests) < asked + step:
        page.wait_for_timeout(50)
    request = script.requests[asked + step - 1]
    return next(m["content"] for m in reversed(request.messages) if m["role"] == "tool")


def _text_of(nb: NotebookPage, index: int) -> str:
    return nb.cell(index).locator(".jp-OutputArea").inner_text()


def _start(page, lab, name: str, cells: list[str]) -> tuple[NotebookPage, PanelPage]:
    lab.write_notebook(name, cells)
    nb = NotebookPage(page, lab, name).open()
    panel = PanelPage(page).open()  # the comm the outputs come on
    nb.run_cell(0)
    nb.wait_idle(0)
    nb.run_cell(1)
    nb.wait_idle(1)
    panel.wait_state("attached")
    return nb, panel


def test_a_cell_the_agent_wrote_runs_its_outputs_under_it_and_saved(page, lab, script, screenshots):
    nb, _panel = _start(page, lab, "run.ipynb", [LOAD, "x = 7", forge_cell("Compute it.")])
    x_id = lab.read_notebook("run.ipynb").cells[1].id
    script.add(Turn([tool_call("notebook_insert", {"source": SLOW, "after_id": x_id})]),
               _run_inserted, Turn.text("It is still running; its outputs land in the cell."))
    asked = len(script.requests)
    nb.run_cell(2)
    # the inserted cell is #2 now; its first line shows while the turn still runs
    page.wait_for_function(f"() => {PANEL}.content.widgets.length === 4", timeout=60_000)
    nb.cell(2).locator(".jp-OutputArea", has_text="made by forge").wait_for(timeout=60_000)
    result = _result_of_step(page, script, asked, 3)
    assert "still running after 1 s" in result and "made by forge" in result, result
    assert "late" not in result
    # the rest lands later, with the value, and the cell stops showing [*]
    nb.cell(2).locator(".jp-OutputArea", has_text="42").wait_for(timeout=30_000)
    page.wait_for_function(f"() => !{PANEL}.content.widgets[2].promptNode.textContent.includes('*')")
    assert "late" in _text_of(nb, 2)
    for theme in in_both_themes(page):  # the pictures of docs/notebook-workspace.md
        path = screenshots / f"cell-run-{theme}.png"
        page.screenshot(path=str(path))
        assert 0 < path.stat().st_size < 600_000
    nb.save()
    saved = lab.read_notebook("run.ipynb").cells[2]
    assert saved.source == SLOW
    kinds = [(o.output_type, o.get("name")) for o in saved.outputs]
    assert kinds == [("stream", "stdout"), ("execute_result", None)], kinds
    assert saved.outputs[0].text == "made by forge\nlate\n"
    assert saved.outputs[1].data["text/plain"] == "42"
    assert not page.forge_errors


def test_a_cell_marked_ask_before_running_asks_with_its_source(page, lab, script):
    nb, panel = _start(page, lab, "ask_run.ipynb", [LOAD, "y = 5", "print('y is', y)",
                                                    forge_cell("Run the print.")])
    nb.cell(2).click(button="right")
    page.locator(".lm-Menu").get_by_role("menuitem", name="Ask Before Forge Runs This Cell").click()
    nb.save()
    saved = lab.read_notebook("ask_run.ipynb").cells[2]
    assert saved.metadata["tags"] == ["forge-ask-before-run"]
    script.add(Turn([tool_call("notebook_run", {"cell_id": saved.id})]), Turn.text("Ran."))
    asked = len(script.requests)
    nb.run_cell(3)
    turn = panel.turns().last
    ask = turn.locator("[data-testid=approve-once]")
    ask.wait_for(timeout=90_000)
    args = turn.locator("[data-testid=tool-args]").last.inner_text()
    assert "print('y is', y)" in args  # the source the person judges, not only its id
    assert _text_of(nb, 2) == ""  # nothing ran before the answer
    ask.click()
    nb.cell(2).locator(".jp-OutputArea", has_text="y is 5").wait_for(timeout=60_000)
    result = _result_of_step(page, script, asked, 2)
    assert "Ran cell" in result and "y is 5" in result, result
    assert not page.forge_errors
