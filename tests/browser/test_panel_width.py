"""The side panel's width as a person sees it: wide enough on first open for a tool's title and
the model picker to read as words (DEFAULT_WIDTH, labextension/src/panel/width.ts), never
narrower than its contents' minimum when dragged narrow (a title moves under the tool's name
rather than shrinking to one letter), and never so wide that the notebook beside it is
squeezed below a readable width. In a real JupyterLab and Chromium, with light and dark
screenshots for docs/side-panel.md."""

from __future__ import annotations

import pytest

from forge_jupyter.testing import Turn, text, tool_call
from tests.browser.lab_helpers import MAX_SCREENSHOT_BYTES, NotebookPage, forge_cell, in_both_themes
from tests.browser.panel_page import PanelPage

pytestmark = pytest.mark.slow

LOAD = "%load_ext forge_jupyter"
SALES = '''import forge_jupyter

@forge_jupyter.tool
def sales_by_region(region: str, year: int) -> str:
    """Units sold in a region in a year."""
    return "1240"
'''
DEFAULT_WIDTH = 380  # labextension/src/panel/width.ts
PANEL_MIN_WIDTH = 300  # panel.css: .forge-panel's min-width
NOTEBOOK_MIN_WIDTH = 400  # panel.css / width.ts
READABLE_PX = 80  # a title this wide shows a few words, not "r…"

WIDTH = "(el) => el.getBoundingClientRect().width"
# Whether a <select> shows its chosen option whole: the option's text, measured in the select's
# font, fits in the box less the arrow and the padding.
PICKER_READS = """(el) => {
  const s = getComputedStyle(el);
  const ctx = document.createElement('canvas').getContext('2d');
  ctx.font = `${s.fontWeight} ${s.fontSize} ${s.fontFamily}`;
  const label = el.options[el.selectedIndex] ? el.options[el.selectedIndex].text : '';
  return {label, need: ctx.measureText(label).width + 24, have: el.getBoundingClientRect().width};
}"""
# The handle between the notebook and the right sidebar: the right-most visible one.
HANDLE = """() => {
  const hs = [...document.querySelectorAll('#jp-main-split-panel > .lm-SplitPanel-handle')]
    .filter((h) => !h.classList.contains('lm-mod-hidden') && h.getBoundingClientRect().width >= 0)
    .map((h) => h.getBoundingClientRect()).sort((a, b) => b.left - a.left);
  const r = hs[0]; return {x: r.left + r.width / 2, y: r.top + r.height / 2};
}"""


def drag_handle_to(page, x: float) -> None:
    at = page.evaluate(HANDLE)
    page.mouse.move(at["x"], at["y"])
    page.mouse.down()
    page.mouse.move((at["x"] + x) / 2, at["y"], steps=4)
    page.mouse.move(x, at["y"], steps=4)
    page.mouse.up()
    page.wait_for_timeout(300)


def notebook_width(page) -> float:
    return page.locator("#jp-main-dock-panel").evaluate(WIDTH)


def assert_readable(panel: PanelPage, tool) -> None:
    title = tool.locator(".forge-tool-title")
    assert title.evaluate(WIDTH) >= READABLE_PX, f"the tool's title is {title.evaluate(WIDTH):.0f}px wide"
    picker = panel.tid("panel-model").evaluate(PICKER_READS)
    assert picker["label"] and picker["have"] >= picker["need"], picker


def test_the_panel_opens_wide_enough_keeps_its_words_and_leaves_the_notebook_room(page, lab, script, screenshots):
    page.set_viewport_size({"width": 1280, "height": 860})
    script.add(Turn([text("Looking it up."),
                     tool_call("sales_by_region", {"region": "North America and the Caribbean", "year": 2024})]),
               Turn.text("**1,240** units."))
    lab.write_notebook("width.ipynb", [LOAD, SALES, forge_cell("How many units in North America in 2024?")])
    nb = NotebookPage(page, lab, "width.ipynb").open()
    panel = PanelPage(page).open()
    page.wait_for_function(f"document.getElementById('forge-jupyter-panel').getBoundingClientRect().width >= {DEFAULT_WIDTH - 2}",
                           timeout=10_000)
    assert panel.root.evaluate(WIDTH) >= DEFAULT_WIDTH - 2  # the sidebar's border
    nb.run_all()
    tool = panel.turns().first.locator("[data-testid=tool]")
    tool.wait_for(timeout=60_000)
    panel.wait_turn_done(panel.turns().first, timeout=60)
    assert_readable(panel, tool)

    for theme in in_both_themes(page):
        path = screenshots / f"panel-width-{theme}.png"
        page.screenshot(path=str(path))
        assert path.stat().st_size < MAX_SCREENSHOT_BYTES

    # Dragged as wide as the window allows: the notebook keeps its minimum.
    before = panel.root.evaluate(WIDTH)
    drag_handle_to(page, 20)
    assert panel.root.evaluate(WIDTH) > before + 50, "the drag did not widen the panel"
    assert notebook_width(page) >= NOTEBOOK_MIN_WIDTH - 1, notebook_width(page)

    # Dragged as narrow as it goes: the panel's minimum, where titles and the picker still read.
    drag_handle_to(page, 1279)
    assert panel.root.evaluate(WIDTH) >= PANEL_MIN_WIDTH - 1
    assert panel.root.evaluate(WIDTH) < DEFAULT_WIDTH, "the drag did not narrow the panel"
    assert_readable(panel, tool)
    assert not page.forge_errors
