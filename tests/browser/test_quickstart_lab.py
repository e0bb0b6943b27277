"""The quickstart as a JupyterLab user meets it (issue 26, "sees" 5 and 6): its approval handler
is a fallback, so the chart's approval shows its buttons in the cell and waits for the click;
the chart then lands in the python call's card; the offline demo says what it is once a turn,
and its cost reads $0. Screenshots, light and dark, for the docs (``FORGE_WRITE_SCREENSHOTS=1``).

Shares the folder's JupyterLab, browser and fake model server, here answering as the demo.
"""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest

from forge_jupyter.testing import DEMO_ANNOUNCEMENT
from tests.browser.lab_helpers import NotebookPage, set_theme
from tests.browser.panel_page import PanelPage

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
DOCS_SCREENSHOTS = ROOT / "docs" / "_static" / "screenshots"
MAX_BYTES = 200_000


@pytest.fixture
def screenshots(tmp_path: Path) -> Path:
    if os.environ.get("FORGE_WRITE_SCREENSHOTS") == "1":
        DOCS_SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        return DOCS_SCREENSHOTS
    return tmp_path


def quickstart_cells() -> list[str]:
    """The quickstart's own cells up to its chart, the demo chosen by name (this Lab's kernels
    are given the fake model server, answering here as the offline demo does)."""
    nb = nbformat.read(ROOT / "notebooks" / "quickstart.ipynb", as_version=4)
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    upto = next(i for i, s in enumerate(code) if s.startswith("stop_answering()"))
    keep = [s for s in code[:upto + 1] if not s.startswith(("answer = _", "%forge fork"))]
    return [keep[0], '%config Forge.model = "openai/forge-demo"', *keep[1:]]


def test_the_quickstart_shows_the_approval_buttons_and_the_demo_is_free(
        page, lab, script, screenshots):
    script.demo_mode = True
    try:
        _walk_through(page, lab, screenshots)
    finally:
        script.demo_mode = False


def _walk_through(page, lab, screenshots: Path) -> None:
    cells = quickstart_cells()
    first = next(i for i, s in enumerate(cells) if s.startswith("%%forge"))
    chart = next(i for i, s in enumerate(cells) if "Plot revenue" in s)
    handler = chart - 1
    assert "fallback=True" in cells[handler]
    lab.write_notebook("quickstart.ipynb", cells)
    page.set_viewport_size({"width": 1200, "height": 860})
    nb = NotebookPage(page, lab, "quickstart.ipynb").open()
    for i in range(chart):
        nb.run_cell(i)
        nb.wait_idle(i, timeout=150)

    # "Sees" 5: the demo says what it is once in the turn (its answer), not beside each step.
    said = nb.cell(first).inner_text()
    assert said.count(DEMO_ANNOUNCEMENT) == 1, said

    # "Sees" 6: the chart's approval waits for the person, buttons in the cell.
    nb.run_cell(chart)
    widget = nb.widget(chart)
    once = widget.locator("[data-testid=approve-once]")
    once.wait_for(timeout=90_000)
    page.wait_for_timeout(2500)  # past the time a view has to show up: still the person's
    assert once.is_visible() and nb.busy(chart)
    try:
        for theme, light in (("light", True), ("dark", False)):
            if not light:
                set_theme(page, "JupyterLab Dark", light=False)
            widget.locator("[data-testid=approval]").scroll_into_view_if_needed()
            nb.cell(chart).screenshot(path=str(screenshots / f"quickstart-approval-{theme}.png"))
    finally:
        set_theme(page, "JupyterLab Light", light=True)
    once.click()
    nb.wait_idle(chart, timeout=120)
    record = nb.cell(chart).locator(".forge-record")
    record.wait_for()
    text = record.inner_text()
    assert "Allowed once by you, in the widget" in text, text
    assert record.locator("img[src^='data:image/png']").count() == 1  # the chart

    nb.run_cell(chart + 1)
    nb.wait_idle(chart + 1)
    assert nb.cell(chart + 1).locator(".jp-OutputArea-output").last.inner_text().strip() == "[]"

    # "Sees" 5: the panel's cost strip knows the demo is free.
    panel = PanelPage(page).open()
    panel.tid("cost-session").filter(has_text="$0").wait_for()
    assert "cost unknown" not in panel.tid("panel-costs").inner_text()
    try:
        for theme, light in (("light", True), ("dark", False)):
            if not light:
                set_theme(page, "JupyterLab Dark", light=False)
            nb.cell(first).scroll_into_view_if_needed()
            page.screenshot(path=str(screenshots / f"demo-once-free-{theme}.png"))
    finally:
        set_theme(page, "JupyterLab Light", light=True)
    for name in ("quickstart-approval-light", "quickstart-approval-dark",
                 "demo-once-free-light", "demo-once-free-dark"):
        size = (screenshots / f"{name}.png").stat().st_size
        assert 0 < size < MAX_BYTES, (name, size)
    assert not page.forge_errors
