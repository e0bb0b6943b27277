"""notebook_read reads the live page (issue 27, item 1), in JupyterLab and Chromium: the
cells as the page holds them — an edit never saved, and one made while the turn runs — and a
chart whose base64 is longer than the page's cut, fetched again whole (liveCells.ts), all
answered over the side panel's comm; what the model was sent is read off the fake server."""

from __future__ import annotations

from forge_jupyter.testing import Turn, delay, text, tool_call
from tests.browser.lab_helpers import PANEL, NotebookPage, forge_cell
from tests.browser.panel_page import PanelPage

LOAD = "%load_ext forge_jupyter"
# a 300×300 PNG of noise: it does not compress, so its base64 is ~360,000 characters
NOISE = ("import io, os\nfrom PIL import Image as P\nfrom IPython.display import Image, display\n"
         "b = io.BytesIO(); P.frombytes('RGB', (300, 300), os.urandom(270000)).save(b, 'PNG')\n"
         "display(Image(b.getvalue()))")


def _set_source(page, index: int, source: str) -> None:
    page.evaluate(f"() => {PANEL}.content.widgets[{index}].model.sharedModel.setSource({source!r})")


def _tool_results(script) -> list[str]:
    return [m["content"] for m in script.requests[-1].messages if m["role"] == "tool"]


def test_notebook_read_sees_unsaved_and_mid_turn_edits_and_a_whole_chart(page, lab, script):
    script.add(Turn([text("Looking at the notebook."), delay(3.0),
                     tool_call("notebook_read", {"search": "edited"}),
                     tool_call("notebook_read", {"index": 2})]),
               Turn.text("Seen both."))
    lab.write_notebook("live_read.ipynb", ["x = 1", "y = 2", NOISE, LOAD,
                                           forge_cell("What changed?")])
    nb = NotebookPage(page, lab, "live_read.ipynb").open()
    panel = PanelPage(page).open()  # the comm the page answers read-cells on
    for i in (2, 3):
        nb.run_cell(i)
        nb.wait_idle(i)
    panel.wait_state("attached")
    _set_source(page, 0, "x = 'edited before the turn, never saved'")
    nb.run_cell(4)
    nb.widget(4).locator("[data-testid=text]").filter(has_text="Looking").wait_for(timeout=60_000)
    _set_source(page, 1, "y = 'edited while the turn runs'")  # during the model's pause
    nb.wait_idle(4)
    searched, chart = _tool_results(script)
    assert "Read from the live notebook in JupyterLab (unsaved edits included)" in searched
    assert "edited before the turn, never saved" in searched
    assert "edited while the turn runs" in searched
    assert "[image/png" in chart and "from cell #2" in chart
    assert "go with this result, in order" in chart, chart  # the page sent it again, whole
    assert "could not be read" not in chart
    assert lab.read_notebook("live_read.ipynb").cells[0].source == "x = 1"  # nothing was saved
    assert not page.forge_errors
