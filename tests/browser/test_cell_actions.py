"""Ask from where you are, in a real JupyterLab and Chromium: "Fix with Forge" under an error
output and the cell context menu's "Ask Forge About This Cell" open the side panel with the
cell mentioned (``@cell:<id>``) in its box, focused and not sent; Enter sends it into the
notebook's kernel, and the fake model server records what the model was sent. Nothing is
written into the outputs; without the labextension there is no button.

One JupyterLab and one browser for the folder (conftest.py); each test opens its notebook.
"""

from __future__ import annotations

import json
from typing import Any

import nbformat
import pytest

from forge_jupyter.testing import Turn
from tests.browser.lab_helpers import (
    MAX_SCREENSHOT_BYTES,
    PANEL,
    Lab,
    NotebookPage,
    in_both_themes,
)
from tests.browser.panel_page import PanelPage

pytestmark = pytest.mark.slow

FIX = "Fix the error in this cell."
# A comment beside the failing line in each cell: IPython's traceback shows the lines around a
# frame, the automatic context note only the failing line — so these reach the model only
# through the mention (the cell's source, the error's traceback).
DEFINE = "def ratio(a, b):\n    # b is the quarter's count of orders\n    return a / b"
FAIL = "# the second quarter's ratio\nratio(1, 0)"
NOTE = "## What the ratio means\nOrders per visit."
UNRUN = "visits = 1200"

BOX = "[data-testid=panel-prompt]"


def write(lab: Lab, name: str, cells: list[tuple[str, str]]) -> None:
    """A notebook of ("code" | "markdown", source) cells in the module's folder."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_markdown_cell(src) if kind == "markdown" else nbformat.v4.new_code_cell(src)
                for kind, src in cells]
    nbformat.write(nb, lab.root / name)


def cell_id(nb: NotebookPage, index: int) -> str:
    return nb.page.evaluate(f"() => {PANEL}.content.widgets[{index}].model.id")


def box_state(page: Any) -> dict[str, Any]:
    """The panel's box as the person has it: its text, where the caret is, whether it has focus."""
    return page.evaluate(f"""() => {{
        const box = document.querySelector('#forge-jupyter-panel {BOX}');
        return {{value: box.value, caret: box.selectionStart, end: box.selectionEnd,
                 focused: document.activeElement === box, visible: box.offsetParent !== null}};
    }}""")


def fix_button(nb: NotebookPage, index: int) -> Any:
    return nb.cell(index).get_by_role("button", name="Fix with Forge")


def failed_notebook(page: Any, lab: Lab, name: str) -> NotebookPage:
    """A notebook whose second cell failed (ZeroDivisionError inside the first cell's function)."""
    write(lab, name, [("code", DEFINE), ("code", FAIL), ("markdown", NOTE), ("code", UNRUN)])
    nb = NotebookPage(page, lab, name).open()
    for i in (0, 1):
        nb.run_cell(i)
        nb.wait_idle(i)
    return nb


def user_text(request: Any) -> str:
    """Everything the last user message of a recorded request says (text parts joined)."""
    user = [m for m in request.messages if m.get("role") == "user"][-1]
    content = user["content"]
    return content if isinstance(content, str) else "\n".join(p.get("text", "") for p in content)


def fix_and_send(page: Any, lab: Lab, script: Any, name: str) -> tuple[NotebookPage, str]:
    """Fail a cell, press its Fix button, check the box, press Enter; the model's answer done."""
    script.add(Turn.text("The divisor is zero: guard b == 0 in ratio()."))
    asked = len(script.requests)  # the run's server: earlier tests' requests stay recorded
    nb = failed_notebook(page, lab, name)
    cid = cell_id(nb, 1)
    fix_button(nb, 1).click()
    panel = PanelPage(page)
    panel.root.wait_for(state="visible")
    state = box_state(page)
    assert state == {"value": f"@cell:{cid} {FIX}", "caret": len(state["value"]),
                     "end": len(state["value"]), "focused": True, "visible": True}, state
    assert len(script.requests) == asked and panel.turns().count() == 0, "nothing is sent before Enter"
    page.keyboard.press("Enter")
    turn = panel.turns().first
    turn.wait_for(timeout=60_000)
    panel.wait_turn_done(turn)
    assert "guard b == 0" in panel.text_of(turn)
    return nb, cid


def test_fix_with_forge_under_an_error_fills_the_panels_box_and_enter_sends_it(page, lab, script):
    nb, cid = fix_and_send(page, lab, script, "fix.ipynb")
    # The kernel took the box's text as the prompt, the mention and the request in it.
    sent = user_text(script.requests[-1])
    assert FIX in sent and cid in sent, sent
    assert box_state(page)["value"] == ""
    # The button is the page's, not the output's: the saved file holds the error alone.
    [error] = nb.outputs(1)
    assert error["output_type"] == "error" and error["ename"] == "ZeroDivisionError"
    assert "Fix with Forge" not in nb.cell(1).inner_text()  # copying or searching the output
    nb.save()
    saved = lab.read_notebook("fix.ipynb").cells[1]
    assert [o["output_type"] for o in saved.outputs] == ["error"]
    assert set(saved.outputs[0]) == {"output_type", "ename", "evalue", "traceback"}
    assert "forge" not in json.dumps(saved.outputs).lower()
    # A cell that ran fine has no button; a stderr stream is no error either.
    nb.page.evaluate(f"""() => {{
        const p = {PANEL};
        p.content.activeCellIndex = 3;
        p.content.activeCell.model.sharedModel.setSource("import sys; print('careful', file=sys.stderr)");
    }}""")
    nb.run_cell(3)
    nb.wait_idle(3)
    assert nb.outputs(3)[0]["name"] == "stderr"
    assert fix_button(nb, 3).count() == 0 and fix_button(nb, 0).count() == 0
    assert not page.forge_errors


def test_the_model_receives_the_fixed_cells_source_and_its_traceback(page, lab, script):
    fix_and_send(page, lab, script, "fix_received.ipynb")
    sent = json.dumps(script.requests[-1].messages)
    assert "the second quarter's ratio" in sent, "the mentioned cell's source"
    assert "b is the quarter's count of orders" in sent, "the error's traceback, its frame in ratio()"


def test_ask_forge_from_the_context_menu_of_a_markdown_and_an_unrun_cell(page, lab, script):
    script.add(Turn.text("The note explains the ratio; visits is not set yet."))
    asked = len(script.requests)
    write(lab, "ask.ipynb", [("markdown", NOTE), ("code", UNRUN)])
    nb = NotebookPage(page, lab, "ask.ipynb").open()
    note, unrun = cell_id(nb, 0), cell_id(nb, 1)

    nb.cell(0).click(button="right")
    menu = page.locator(".lm-Menu")
    ask = menu.get_by_role("menuitem", name="Ask Forge About This Cell")
    ask.wait_for()
    assert menu.get_by_role("menuitem", name="Fix Error with Forge").count() == 0  # no error here
    ask.click()
    state = box_state(page)
    assert state["value"] == f"@cell:{note} " and state["caret"] == len(state["value"]), state
    assert state["focused"], "the caret waits in the box for the question"
    page.keyboard.type("What does this note say about")

    # A second cell joins the draft at the caret; the draft is kept.
    nb.cell(1).click(button="right")
    menu.get_by_role("menuitem", name="Ask Forge About This Cell").click()
    state = box_state(page)
    assert state["value"] == f"@cell:{note} What does this note say about @cell:{unrun} ", state
    assert state["focused"] and state["caret"] == len(state["value"])
    # The same cell again adds nothing.
    nb.cell(1).click(button="right")
    PanelPage(page).screenshot("cell-menu-ask")  # the cell menu with forge's items (artifacts)
    menu.get_by_role("menuitem", name="Ask Forge About This Cell").click()
    assert box_state(page)["value"] == state["value"]
    page.keyboard.type("?")
    assert len(script.requests) == asked
    page.keyboard.press("Enter")
    panel = PanelPage(page)
    turn = panel.turns().first
    turn.wait_for(timeout=60_000)
    panel.wait_turn_done(turn)
    sent = user_text(script.requests[-1])
    assert "What does this note say about" in sent and note in sent and unrun in sent, sent

    # Several cells selected: the menu on one of them asks about each, in order.
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:select-all')")
    nb.cell(1).click(button="right")
    menu.get_by_role("menuitem", name="Ask Forge About the Selected Cells").click()
    assert box_state(page)["value"] == f"@cell:{note} @cell:{unrun} "
    assert not page.forge_errors


def test_the_actions_work_from_the_keyboard_and_the_command_palette(page, lab, script):
    asked = len(script.requests)
    nb = failed_notebook(page, lab, "keys.ipynb")
    cid = cell_id(nb, 1)
    # The button is a real button: Tab reaches it, Enter presses it.
    button = fix_button(nb, 1)
    assert button.get_attribute("tabindex") in (None, "0")
    button.focus()
    page.keyboard.press("Enter")
    assert box_state(page)["value"] == f"@cell:{cid} {FIX}"
    page.locator(f"#forge-jupyter-panel {BOX}").fill("")
    # The failed cell's menu (opened on its traceback) has Fix beside Ask.
    nb.cell(1).locator(".jp-OutputArea-output").click(button="right")
    menu = page.locator(".lm-Menu")
    menu.get_by_role("menuitem", name="Ask Forge About This Cell").wait_for()
    menu.get_by_role("menuitem", name="Fix Error with Forge").click()
    assert box_state(page)["value"] == f"@cell:{cid} {FIX}"
    page.locator(f"#forge-jupyter-panel {BOX}").fill("")

    def palette(query: str) -> Any:
        nb.cell(2).click()  # the markdown cell, active, in command mode
        page.keyboard.press("Escape")
        page.keyboard.press("Control+Shift+C")
        search = page.locator(".lm-CommandPalette-input")
        search.wait_for()
        search.fill(query)
        return page.locator(".lm-CommandPalette-item")

    items = palette("Forge")
    labels = items.all_inner_texts()
    assert any("Ask Forge About This Cell" in t for t in labels), labels
    assert any("Fix Error with Forge" in t for t in labels), labels
    page.keyboard.press("Escape")
    # Fix on a cell without an error says what to do instead, and leaves the box alone.
    palette("Fix Error with Forge")
    page.keyboard.press("Enter")
    page.locator(".Toastify__toast").filter(has_text="no error to fix").wait_for()
    assert box_state(page)["value"] == ""
    palette("Ask Forge About This Cell")
    page.keyboard.press("Enter")
    state = box_state(page)
    assert state["value"] == f"@cell:{cell_id(nb, 2)} " and state["focused"], state
    assert len(script.requests) == asked
    # Without a kernel the box is still filled, and says what to do before sending.
    page.locator(f"#forge-jupyter-panel {BOX}").fill("")
    page.evaluate(f"() => {PANEL}.sessionContext.shutdown()")
    page.wait_for_function(f"() => !{PANEL}.sessionContext.session")
    fix_button(nb, 1).click()
    assert box_state(page)["value"] == f"@cell:{cid} {FIX}"
    status = PanelPage(page).tid("panel-prompt-status")
    assert "no kernel" in status.inner_text() and "Change Kernel" in status.inner_text()
    assert not page.forge_errors


def test_an_error_saved_in_an_untrusted_notebook_gets_the_button_an_interrupt_does_not(page, lab, script):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    hostile = '<img src=x onerror="window.__forge_xss=1">'
    failed = nbformat.v4.new_code_cell("load()", execution_count=3)
    failed.outputs = [nbformat.v4.new_output("error", ename="ValueError", evalue=hostile,
                                             traceback=[f"\x1b[31mValueError\x1b[0m: {hostile}"])]
    stopped = nbformat.v4.new_code_cell("wait()", execution_count=4)
    stopped.outputs = [nbformat.v4.new_output("error", ename="KeyboardInterrupt", evalue="",
                                              traceback=["KeyboardInterrupt: "])]
    odd = nbformat.v4.new_code_cell("x = 1")
    nb.cells = [failed, stopped, odd]
    raw = json.loads(nbformat.writes(nb))
    raw["cells"][2]["id"] = "not a cell id"  # a hand-edited file: no mention can name it
    (lab.root / "saved.ipynb").write_text(json.dumps(raw))  # not signed: opened untrusted
    page_nb = NotebookPage(page, lab, "saved.ipynb").open()
    assert page.evaluate(f"() => {PANEL}.content.widgets[0].model.trusted") is False
    fix_button(page_nb, 0).wait_for()
    shown = page_nb.cell(0).locator(".jp-OutputArea-output").inner_text()
    assert hostile in shown  # the traceback is text, drawn by JupyterLab's own renderer
    assert page.evaluate("() => window.__forge_xss") is None
    assert fix_button(page_nb, 1).count() == 0  # an interrupt is the person's own doing
    fix_button(page_nb, 0).click()
    assert box_state(page)["value"] == f"@cell:{cell_id(page_nb, 0)} {FIX}"
    # A cell whose id no mention can name is refused with what to do instead.
    page_nb.cell(2).click(button="right")
    page.locator(".lm-Menu").get_by_role("menuitem", name="Ask Forge About This Cell").click()
    page.locator(".Toastify__toast").filter(has_text="not a notebook cell id").wait_for()
    assert box_state(page)["value"] == f"@cell:{cell_id(page_nb, 0)} {FIX}"
    # The same output in a view of its own has no cell to point at: no button there.
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:create-output-view')")
    view = page.locator(".jp-LinkedOutputView")
    view.locator(".jp-OutputArea-output").filter(has_text="ValueError").wait_for()
    assert view.get_by_role("button", name="Fix with Forge").count() == 0
    assert not page.forge_errors


def test_the_fix_button_and_the_filled_box_follow_the_theme(page, lab, script, screenshots):
    page.set_viewport_size({"width": 1280, "height": 720})
    nb = failed_notebook(page, lab, "themes.ipynb")
    fix_button(nb, 1).click()
    colours = {}
    for theme in in_both_themes(page):
        colours[theme] = fix_button(nb, 1).evaluate("""(b) => {
            const s = getComputedStyle(b), root = getComputedStyle(document.body);
            return {bg: s.backgroundColor, fg: s.color, label: getComputedStyle(b, '::after').content,
                    layout: root.getPropertyValue('--jp-layout-color1').trim()};
        }""")
        nb.cell(1).scroll_into_view_if_needed()
        path = screenshots / f"fix-with-forge-{theme}.png"
        page.screenshot(path=str(path))
        assert 0 < path.stat().st_size < MAX_SCREENSHOT_BYTES
    assert colours["light"]["bg"] != colours["dark"]["bg"], colours
    assert colours["light"]["fg"] != colours["dark"]["fg"], colours
    assert colours["light"]["label"] == '"Fix with Forge"', colours
    assert not page.forge_errors


def test_without_the_labextension_an_error_has_no_forge_button(page, lab, script, labextension_disabled):
    nb = failed_notebook(page, lab, "plain.ipynb")
    output = nb.cell(1).locator(".jp-OutputArea-output")
    assert "ZeroDivisionError" in output.inner_text()
    assert fix_button(nb, 1).count() == 0
    assert page.locator(".forge-error-actions").count() == 0
    commands = page.evaluate("() => window.jupyterapp.commands.listCommands()")
    assert "forge-jupyter:fix-error" not in commands and "forge-jupyter:ask-about-cell" not in commands
