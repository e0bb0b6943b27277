"""The side panel's layout and its approval buttons as a person sees them: wide enough at its
default width for the pickers, one style for
the primary answer in the cell and in the panel, a label that says how long "allow" lasts,
and a prompt sent while a cell runs shown as queued. In a real JupyterLab and Chromium.
"""

from __future__ import annotations

import pytest

from forge_jupyter.testing import Turn, tool_call
from tests.browser.lab_helpers import (
    MAX_SCREENSHOT_BYTES,
    NOTE_TOOL,
    NotebookPage,
    forge_cell,
    in_both_themes,
)
from tests.browser.panel_page import PanelPage

pytestmark = pytest.mark.slow

LOAD = "%load_ext forge_jupyter"
LOOKS = "(el) => { const s = getComputedStyle(el); return [s.backgroundColor, s.color, s.borderColor]; }"
WIDTH = "(el) => el.getBoundingClientRect().width"


def test_approval_buttons_look_alike_say_how_long_and_the_panel_keeps_its_width(page, lab, script, screenshots):
    script.add(Turn([tool_call("write_note", {"text": "hello"})]), Turn.text("Wrote it."))
    lab.write_notebook("layout.ipynb", [LOAD, NOTE_TOOL, forge_cell("Note hello.")])
    nb = NotebookPage(page, lab, "layout.ipynb").open()
    panel = PanelPage(page).open()
    nb.run_all()
    in_panel = panel.turns().first.locator("[data-testid=approve-once]")
    in_panel.wait_for(timeout=60_000)
    in_cell = nb.widget(2).locator("[data-testid=approve-once]")
    in_cell.wait_for()

    # "Allow for session" read as outliving a restart: the label says it does not.
    session = nb.widget(2).locator("[data-testid=approve-session]")
    assert session.inner_text() == "Allow until kernel restarts"
    assert panel.turns().first.locator("[data-testid=approve-session]").inner_text() == session.inner_text()
    # The primary answer is filled in both places, in the same colours.
    cell_looks, panel_looks = in_cell.evaluate(LOOKS), in_panel.evaluate(LOOKS)
    assert cell_looks == panel_looks, (cell_looks, panel_looks)
    assert cell_looks[0] not in ("rgba(0, 0, 0, 0)", "transparent"), "filled, not outlined"

    # The pickers share their row instead of a third of it each.
    assert panel.tid("panel-model").evaluate(WIDTH) >= 0.4 * panel.root.evaluate(WIDTH) - 24

    for theme in in_both_themes(page):
        path = screenshots / f"panel-approval-buttons-{theme}.png"
        page.screenshot(path=str(path))
        assert path.stat().st_size < MAX_SCREENSHOT_BYTES
    in_panel.click()
    nb.wait_idle(2)

    assert not page.forge_errors


def test_a_prompt_sent_while_a_cell_runs_shows_as_queued_until_it_runs(page, lab, script):
    script.add(Turn.text("Now it ran."))
    lab.write_notebook("queued.ipynb", [LOAD, "import time\ntime.sleep(8)"])
    nb = NotebookPage(page, lab, "queued.ipynb").open()
    panel = PanelPage(page).open()
    nb.run_cell(0)
    nb.wait_idle(0)
    panel.wait_state("attached")
    nb.run_cell(1)
    nb.wait_busy(1)
    panel.send("Run after the sleep.")
    queued = panel.tid("panel-queued")
    queued.wait_for(timeout=10_000)
    assert "Run after the sleep." in queued.inner_text() and "queued" in queued.inner_text()
    turn = panel.turns().first
    panel.wait_turn_done(turn, timeout=60)
    assert "Now it ran." in panel.text_of(turn)
    assert queued.count() == 0
    assert not page.forge_errors
