"""The docs' screenshots, taken from the product as it runs: a %%forge cell against the fake
model server (text, a tool call card, the status line) and the side panel beside it, in
JupyterLab's light theme and in "JupyterLab Dark".

The test asserts what the pictures must show (the widget and the panel visible, their colours
following the theme) and writes them to a temporary folder. With ``FORGE_WRITE_SCREENSHOTS=1``
it writes them to ``docs/_static/screenshots/`` instead, where the README and the docs show
them (docs/testing.md: regenerating them); a plain run leaves the tree as it was.
"""

from __future__ import annotations

import pytest

from forge_jupyter.testing import Turn, delay, text, tool_call
from tests.browser.lab_helpers import MAX_SCREENSHOT_BYTES, NotebookPage, forge_cell, set_theme
from tests.browser.panel_page import PanelPage

pytestmark = pytest.mark.slow


LOAD = "%load_ext forge_jupyter"
SALES = '''import forge_jupyter

@forge_jupyter.tool
def sales_by_region(year: int) -> str:
    """Units sold per region in a year."""
    return "North 1240\\nSouth 980\\nWest 755"
'''
HOLD = 120  # seconds the last answer holds its stream open; Stop ends it sooner
QUESTION = "Which region sold the most in 2024?"
ANSWER = ("**North** sold the most in 2024.\n\n| region | units |\n|---|--:|\n| North | 1,240 |\n"
          "| South | 980 |\n| West | 755 |")
FOLLOW_UP = "And the least?"
FOLLOW_UP_ANSWER = "**West**, with 755 units: a third fewer than the South."

# The colours a person sees on an element: its text colour, and the background of the nearest
# ancestor that paints one (the widget itself may be transparent over the notebook).
LOOKS = """(el) => {
    let bg = 'rgba(0, 0, 0, 0)';
    for (let node = el; node && node.nodeType === 1; node = node.parentElement) {
        const c = getComputedStyle(node).backgroundColor;
        if (c !== 'rgba(0, 0, 0, 0)' && c !== 'transparent') { bg = c; break; }
    }
    return {background: bg, color: getComputedStyle(el).color};
}"""


def test_the_widget_and_the_panel_in_the_light_and_the_dark_theme(page, lab, script, screenshots):
    page.set_viewport_size({"width": 1200, "height": 800})
    # The panel's turn first, then the cell's: its answer streams, then the model holds the
    # stream open (HOLD; the chunk just before a pause is held back, hence the newline), so
    # the live widget (text, tool card, status line) stays on screen while both themes are
    # photographed; Stop ends it.
    script.add(Turn([text("Let me look at the sales."), tool_call("sales_by_region", {"year": 2024})]),
               Turn.text(ANSWER),
               Turn([text("Comparing the regions."), tool_call("sales_by_region", {"year": 2024})]),
               Turn([text(FOLLOW_UP_ANSWER), text("\n"), delay(HOLD)]))
    lab.write_notebook("quickstart.ipynb", [LOAD, SALES, forge_cell(FOLLOW_UP)])
    nb = NotebookPage(page, lab, "quickstart.ipynb").open()
    page.evaluate("() => window.jupyterapp.commands.execute('application:toggle-left-area')")
    for i in (0, 1):
        nb.run_cell(i)
        nb.wait_idle(i)
    panel = PanelPage(page).open()
    panel.wait_state("attached")
    panel.send(QUESTION)
    turn = panel.turns().last
    panel.wait_turn_done(turn)
    turn.locator("[data-testid=tool]").wait_for()
    turn.locator("table").wait_for()

    nb.run_cell(2)
    widget = nb.widget(2)
    widget.locator(".forge-tool[data-tool=sales_by_region]").wait_for(timeout=90_000)
    widget.locator("[data-testid=text]").filter(has_text="than the South.").wait_for()
    status = widget.locator("[data-testid=status]")
    assert status.inner_text().strip(), "the status line says what the run is doing"

    looks: dict[str, dict[str, dict[str, str]]] = {}
    try:
        for theme, light in (("light", True), ("dark", False)):
            if not light:
                set_theme(page, "JupyterLab Dark", light=False)
            nb.cell(2).scroll_into_view_if_needed()
            assert widget.is_visible() and panel.root.is_visible()
            looks[theme] = {"widget": widget.evaluate(LOOKS), "panel": panel.root.evaluate(LOOKS)}
            nb.cell(2).screenshot(path=str(screenshots / f"widget-{theme}.png"))
            page.screenshot(path=str(screenshots / f"panel-{theme}.png"))
        assert nb.busy(2), f"the run held its stream open for the pictures (HOLD = {HOLD} s)"
    finally:
        set_theme(page, "JupyterLab Light", light=True)
        widget.locator("[data-testid=stop]").click()
        nb.wait_idle(2, timeout=30)

    for part in ("widget", "panel"):
        light, dark = looks["light"][part], looks["dark"][part]
        assert light["background"] != dark["background"], (part, looks)
        assert light["color"] != dark["color"], (part, "the text colour follows the theme", looks)
    for name in ("widget-light", "widget-dark", "panel-light", "panel-dark"):
        size = (screenshots / f"{name}.png").stat().st_size
        assert 0 < size < MAX_SCREENSHOT_BYTES, (name, size)
    assert not page.forge_errors
