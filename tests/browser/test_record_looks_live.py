"""The record looks like the live view's last frame (issue 26, "what the person sees" 2): when
a turn ends in JupyterLab, its tool card, headings, table and code block keep their size and
place — the widget gives way to the record and the cell's value without a reflow.

Measured in one run: each element's box (relative to the cell's output area) in the live
widget while the last answer's stream is held open, then in the record and the value once
the turn has ended. Screenshots of the finished cell, light and dark, as test_screenshots.py
takes them (docs/_static/screenshots/ with FORGE_WRITE_SCREENSHOTS=1).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from forge_jupyter.testing import Turn, delay, text, tool_call
from tests.browser.lab_helpers import NotebookPage, forge_cell, set_theme

pytestmark = pytest.mark.slow

DOCS_SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "_static" / "screenshots"
MAX_BYTES = 200_000
HOLD = 6  # seconds the answer's stream stays open after its text: the live frame to measure

SALES = '''import forge_jupyter

@forge_jupyter.tool
def sales_by_region(year: int) -> str:
    """Units sold per region in a year."""
    return "North 1240\\nSouth 980\\nWest 755"
'''
ANSWER = """## North sold the most

Across the three regions, **North** leads in 2024.

| region | units |
|---|--:|
| North | 1,240 |
| South | 980 |
| West | 755 |

```python
best = max(units, key=units.get)
```

That is all."""

# Each element's box relative to the cell's output area: what a person sees move, or not.
BOXES = """(cell) => {
    const area = cell.querySelector('.jp-Cell-outputArea').getBoundingClientRect();
    const box = (sel) => {
        const el = [...cell.querySelectorAll(sel)].find((e) => e.offsetParent !== null);
        if (!el) return null;
        const r = el.getBoundingClientRect();
        return [r.x - area.x, r.y - area.y, r.width, r.height].map((v) => Math.round(v * 10) / 10);
    };
    return {tool: box('.forge-tool'), tool_state: box('.forge-tool-state'),
            heading: box('.forge-md h2'), table: box('.forge-md table'),
            cell: box('.forge-md td'), code: box('.forge-md pre')};
}"""
STYLES = """(cell) => {
    const of = (sel, props) => {
        const el = cell.querySelector(sel);
        const s = getComputedStyle(el);
        return props.map((p) => s.getPropertyValue(p));
    };
    return {heading: of('.forge-md h2', ['font-size', 'font-weight']),
            cell: of('.forge-md td:last-child', ['text-align']),
            code: of('.forge-md pre', ['background-color']),
            tool: of('.forge-tool', ['border-left-color'])};
}"""


@pytest.fixture
def screenshots(tmp_path: Path) -> Path:
    if os.environ.get("FORGE_WRITE_SCREENSHOTS") == "1":
        DOCS_SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        return DOCS_SCREENSHOTS
    return tmp_path


def test_nothing_moves_when_the_turn_ends(page, lab, script, screenshots):
    page.set_viewport_size({"width": 1100, "height": 900})
    script.add(Turn([text("Let me look at the sales."), tool_call("sales_by_region", {"year": 2024})]),
               Turn([text(ANSWER), text("\n"), delay(HOLD)]))
    lab.write_notebook("looks.ipynb", ["%load_ext forge_jupyter", SALES,
                                       forge_cell("Which region sold the most in 2024?")])
    nb = NotebookPage(page, lab, "looks.ipynb").open()
    page.evaluate("() => window.jupyterapp.commands.execute('application:toggle-left-area')")
    nb.run_cell(0)
    nb.wait_idle(0)
    nb.run_cell(1)
    nb.wait_idle(1)
    nb.run_cell(2)
    cell = nb.cell(2)
    widget = nb.widget(2)
    widget.locator(".forge-md pre").wait_for(timeout=90_000)
    widget.locator("[data-testid=text]").filter(has_text="That is all.").wait_for()
    page.wait_for_timeout(300)  # the frame after the last chunk is drawn
    assert nb.busy(2), f"the answer's stream was still held open (HOLD = {HOLD} s)"
    live, live_styles = cell.evaluate(BOXES), cell.evaluate(STYLES)

    nb.wait_idle(2, timeout=60)
    cell.locator(".forge-record").wait_for()
    page.wait_for_timeout(300)
    assert cell.locator("[data-testid=forge-turn]").count() == 0, "the widget gave way to the record"
    done, done_styles = cell.evaluate(BOXES), cell.evaluate(STYLES)

    assert live_styles == done_styles, (live_styles, done_styles)
    for name, before in live.items():
        after = done[name]
        assert before is not None and after is not None, (name, live, done)
        moved = [round(a - b, 1) for a, b in zip(after, before, strict=True)]
        assert all(abs(d) <= 2 for d in moved), f"{name} moved by {moved}: {before} → {after}"

    for theme, light in (("light", True), ("dark", False)):
        if not light:
            set_theme(page, "JupyterLab Dark", light=False)
        cell.scroll_into_view_if_needed()
        cell.screenshot(path=str(screenshots / f"record-{theme}.png"))
    set_theme(page, "JupyterLab Light", light=True)
    for theme in ("light", "dark"):
        size = (screenshots / f"record-{theme}.png").stat().st_size
        assert 0 < size < MAX_BYTES, (theme, size)
    assert not page.forge_errors
