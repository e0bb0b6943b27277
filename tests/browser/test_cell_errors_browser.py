"""A failing %%forge cell in a real JupyterLab: a refused key ends the cell with one
``ForgeModelError`` line (no "(no text)" value) and Run All stops there; an interrupt mid-stream
ends it with one ``KeyboardInterrupt`` line under the record — in the light and dark theme
(docs/notebook.md shows the pictures; FORGE_WRITE_SCREENSHOTS=1 writes them there)."""

from __future__ import annotations

import pytest

from forge_jupyter.testing import Turn, delay, text
from tests.browser.lab_helpers import MAX_SCREENSHOT_BYTES, NotebookPage, forge_cell, set_theme

pytestmark = pytest.mark.slow

LOAD = "%load_ext forge_jupyter"


def _errors(nb: NotebookPage, index: int) -> list[dict]:
    return [o for o in nb.outputs(index) if o.get("output_type") == "error"]


def test_a_refused_key_fails_the_cell_and_run_all_stops_there(page, lab, script, screenshots):
    page.set_viewport_size({"width": 1100, "height": 700})
    script.add(Turn.error(401, "Incorrect API key provided"))
    lab.write_notebook("failing.ipynb", [LOAD, forge_cell("Summarise the sales."), "print('after')"])
    nb = NotebookPage(page, lab, "failing.ipynb").open()
    nb.run_all()
    nb.wait_idle(1)
    [error] = _errors(nb, 1)
    assert error["ename"] == "ForgeModelError" and "refused the API key" in error["evalue"], error
    assert not [o for o in nb.outputs(1) if o.get("output_type") == "execute_result"]  # no "(no text)"
    shown = nb.cell(1).inner_text()
    assert "ForgeModelError" in shown and "FORGE_API_KEY" in shown, shown
    page.wait_for_timeout(1000)
    assert nb.outputs(2) == [] and not nb.busy(2)  # Run All stopped at the failed turn
    try:
        for theme, light in (("light", True), ("dark", False)):
            if not light:
                set_theme(page, "JupyterLab Dark", light=False)
            nb.cell(1).scroll_into_view_if_needed()
            nb.cell(1).screenshot(path=str(screenshots / f"cell-error-{theme}.png"))
    finally:
        set_theme(page, "JupyterLab Light", light=True)
    for theme in ("light", "dark"):
        assert 0 < (screenshots / f"cell-error-{theme}.png").stat().st_size < MAX_SCREENSHOT_BYTES
    assert not page.forge_errors


def test_an_interrupted_cell_ends_with_one_keyboard_interrupt_line(page, lab, script):
    script.add(Turn([text("The first half of the answer."), text("\n"), delay(60), text("Never.")]))
    lab.write_notebook("interrupted.ipynb", [LOAD, forge_cell("Answer slowly.")])
    nb = NotebookPage(page, lab, "interrupted.ipynb").open()
    nb.run_cell(0)
    nb.wait_idle(0)
    nb.run_cell(1)
    nb.widget(1).locator("[data-testid=text]").filter(has_text="first half").wait_for(timeout=90_000)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:interrupt-kernel')")
    nb.wait_idle(1, timeout=60)
    [error] = _errors(nb, 1)
    assert error["ename"] == "KeyboardInterrupt"
    lines = "\n".join(error["traceback"]).splitlines()
    assert len(lines) <= 3, lines  # 116–143 lines through litellm and aiohttp before
    assert "first half" in nb.cell(1).inner_text()  # the record keeps what streamed
    assert not page.forge_errors
