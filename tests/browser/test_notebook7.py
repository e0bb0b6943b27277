"""The live widget and the review of the agent's cell changes in Jupyter Notebook 7 (not only
JupyterLab), in a real browser.

With the ``notebook`` package installed, the run's JupyterLab server (the ``lab`` fixture)
also serves the Notebook 7 UI at ``/notebooks/<path>``. That page does not expose its app object
(``--LabApp.expose_app_in_browser`` is JupyterLab's flag, not ``JupyterNotebookApp``'s), so this
test drives it as a user would: the Run menu, and the DOM for the cell's state and outputs.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest

from forge_jupyter.testing import Turn, text, tool_call
from tests.browser.kernel_frontend import kernel_env
from tests.browser.lab_helpers import ARTIFACTS, Lab, forge_cell, running_lab
from tests.browser.panel_page import PanelPage

pytestmark = pytest.mark.slow

NAME = "nb7.ipynb"
FORGE = 1  # the %%forge cell's index
INTRO = "Let me look at the folder first."
ANSWER = "The folder holds " + " ".join(f"item{i}" for i in range(70)) + " and nb7.ipynb."

# Notebook 7.6's own keyboard-shortcuts settings plugin throws this on load of any notebook,
# forge or not (a plain `jupyter notebook` with a `1+1` notebook shows it too). Only that one,
# from Notebook's own bundle, is tolerated.
NB7_OWN_ERROR = "Cannot read properties of undefined (reading 'schema')"


@pytest.fixture(scope="module")
def lab(model_server, tmp_path_factory) -> Iterator[Lab]:
    """A JupyterLab of this module's own, its notebook at the root, as before the browser
    tests shared one: Notebook 7's page restores its file browser to a notebook's folder with
    ``filebrowser:open-path``, a command that page does not register (a page error from
    Notebook's own bundle), and in a Lab other modules have used it does so even from the
    root. One server start for one test, until that is understood."""
    base = tmp_path_factory.mktemp("lab-nb7")
    with running_lab(kernel_env(model_server, base), base) as server:
        yield server


class Notebook7:
    """A notebook opened in the Notebook 7 UI, driven through its menus and read from the DOM."""

    def __init__(self, page: Any, lab: Lab, name: str) -> None:
        self.page, self.lab, self.name = page, lab, name

    def open(self, cells: int) -> Notebook7:
        self.page.goto(f"{self.lab.url}/notebooks/{self.lab.path(self.name)}?token={self.lab.token}")
        self.page.locator("#main-panel .jp-Notebook .jp-Cell").nth(cells - 1).wait_for()
        deadline = time.monotonic() + 60
        while not self.kernel_idle():
            assert time.monotonic() < deadline, "the notebook's kernel never became idle"
            time.sleep(0.2)
        self.page.locator(".jp-Notebook-ExecutionIndicator[data-status=idle]").wait_for()
        return self

    def kernel_idle(self) -> bool:
        sessions = [s for s in self.lab.api("/api/sessions") if s["path"] == self.lab.path(self.name)]
        return bool(sessions) and sessions[0]["kernel"]["execution_state"] == "idle"

    def open_panel(self) -> PanelPage:
        """The side panel, as a person opens it here: View → Right Sidebar → Show Forge."""
        self.page.get_by_role("menuitem", name="View", exact=True).click()
        self.page.locator(".lm-Menu-item", has_text="Right Sidebar").hover()
        self.page.get_by_role("menuitem", name="Show Forge", exact=True).click()
        panel = PanelPage(self.page)
        panel.root.wait_for(state="visible")
        return panel

    def run_cell(self, index: int) -> None:
        """Select cell ``index`` (command mode) and press Ctrl+Enter (run it, stay: Shift+Enter adds a cell after the last)."""
        self.cell(index).locator(".jp-InputPrompt").click()
        self.page.keyboard.press("Control+Enter")

    def run_all_from_menu(self) -> None:
        self.page.get_by_role("menuitem", name="Run", exact=True).click()
        self.page.get_by_role("menuitem", name="Run All Cells", exact=True).click()

    def cell(self, index: int) -> Any:
        return self.page.locator("#main-panel .jp-Notebook .jp-Cell").nth(index)

    def prompt(self, index: int) -> str:
        return self.cell(index).locator(".jp-InputPrompt").inner_text()

    def busy(self, index: int) -> bool:
        return "*" in self.prompt(index)

    def wait_busy(self, index: int, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while not self.busy(index):
            assert time.monotonic() < deadline, f"cell {index} never started"
            time.sleep(0.05)

    def wait_done(self, index: int, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not re.search(r"\[\d+\]", self.prompt(index)):
            assert time.monotonic() < deadline, f"cell {index} never finished"
            time.sleep(0.1)

    def widget(self, index: int) -> Any:
        return self.cell(index).locator(".forge-turn")

    def widget_text(self, index: int) -> str:
        texts = self.widget(index).locator("[data-testid=text]")
        return " ".join(texts.all_text_contents())  # never waits: [] once the widget is gone

    def save(self) -> None:
        before = (self.lab.root / self.name).stat().st_mtime_ns
        self.cell(0).locator(".jp-InputPrompt").click()  # command mode, focus in the notebook
        self.page.keyboard.press("Control+s")
        deadline = time.monotonic() + 15
        while (self.lab.root / self.name).stat().st_mtime_ns == before:
            assert time.monotonic() < deadline, "the notebook was not saved"
            time.sleep(0.1)


def test_forge_cell_streams_live_and_leaves_its_record_in_notebook7(page, lab, script):
    errors: list[Any] = []
    page.on("pageerror", lambda exc: errors.append(exc))
    script.add(Turn([text(INTRO, chunk=3), tool_call("list", {"path": "."}, fragments=4)],
                    chunk_delay=0.05),
               Turn([text(ANSWER, chunk=5)], chunk_delay=0.05))  # ~100 chunks over ~5 s
    lab.write_notebook(NAME, ["%load_ext forge_jupyter", "%%forge\nWhat is in this folder?"])
    nb = Notebook7(page, lab, NAME).open(cells=2)
    assert page.evaluate("typeof window.jupyterapp") == "undefined"  # really Notebook 7's page
    assert page.locator("#main-panel .jp-NotebookPanel").count() == 1
    assert page.locator(".jp-LabShell").count() == 0

    nb.run_all_from_menu()
    nb.wait_busy(FORGE)
    nb.widget(FORGE).wait_for()
    card = nb.widget(FORGE).locator(".forge-tool")
    seen: list[int] = []
    states: list[str] = []
    shot = False
    while nb.busy(FORGE):
        n = len(nb.widget_text(FORGE))
        if n and (not seen or n != seen[-1]):
            seen.append(n)
        # Read without waiting: the card can vanish between two calls when the run ends.
        state = card.evaluate_all("els => els.length ? els[0].getAttribute('data-state') : null")
        if state:
            if not states or states[-1] != state:
                states.append(state)
            if state == "completed" and not shot and "item20" in nb.widget_text(FORGE):
                ARTIFACTS.mkdir(exist_ok=True)
                page.screenshot(path=str(ARTIFACTS / "notebook7.png"), full_page=True)
                shot = True
        time.sleep(0.1)
    assert shot, f"no live moment with a completed tool card; text lengths {seen}, states {states}"
    assert len(seen) >= 6, f"the text should grow visibly while the cell runs, saw lengths {seen}"
    assert seen == sorted(seen)
    assert states and states[-1] == "completed", states

    nb.wait_done(FORGE)
    # The live widget gave way to the static record; the answer is the cell's value.
    page.wait_for_function("() => document.querySelectorAll('.jp-Notebook [data-testid=forge-turn]').length === 0",
                           timeout=10_000)
    area = nb.cell(FORGE).locator(".jp-OutputArea")
    value = area.locator(".jp-OutputArea-executeResult")
    assert value.count() == 1
    assert "item69 and nb7.ipynb." in value.inner_text()
    record = area.locator(".jp-OutputArea-child:not(.jp-OutputArea-executeResult)")
    assert record.count() == 1
    assert "list" in record.inner_text() and "completed" in record.inner_text()
    assert INTRO in record.inner_text() and "item69" not in record.inner_text()

    nb.save()
    saved = lab.read_notebook(NAME).cells[FORGE].outputs
    assert "application/vnd.jupyter.widget-view+json" not in [m for o in saved
                                                              for m in o.get("data", {})]
    # The record, the saved-notebook note (empty once the turn ended), the value.
    assert [(o.output_type, bool(o.get("data"))) for o in saved] == [
        ("display_data", True), ("display_data", False), ("execute_result", True)]
    assert ANSWER in saved[2].data["text/html"]

    unexpected = [e for e in errors
                  if not (e.message == NB7_OWN_ERROR and "/static/notebook/" in (e.stack or ""))]
    assert not unexpected, [e.stack for e in unexpected]


def _own_errors(errors: list[Any]) -> list[Any]:
    return [e for e in errors
            if not (e.message == NB7_OWN_ERROR and "/static/notebook/" in (e.stack or ""))]


def test_the_agents_insert_and_edit_are_reviewed_in_notebook7(page, lab, script):
    # Issue 28, items 1 and 2, in Notebook 7's own page: the same extension applies the model's
    # cell changes through the notebook's model, marks them, and the person decides.
    errors: list[Any] = []
    page.on("pageerror", lambda exc: errors.append(exc))
    name = "nb7_review.ipynb"
    load = "%load_ext forge_jupyter\n%config Forge.permissions = ['notebook_*=allow']"
    lab.write_notebook(name, ["x = 1", "y = 2", load, forge_cell("Tidy up.")])
    ids = [c.id for c in lab.read_notebook(name).cells]
    script.add(Turn([tool_call("notebook_insert", {"source": "w = 0", "after_id": ids[0]}, id="i"),
                     tool_call("notebook_edit", {"cell_id": ids[1], "source": "y = 20\nprint(y)"},
                               id="e")]),
               Turn.text("Tidied."))
    nb = Notebook7(page, lab, name).open(cells=4)
    assert page.evaluate("typeof window.jupyterapp") == "undefined"  # really Notebook 7's page
    panel = nb.open_panel()  # the panel's comm is how the page takes the kernel's changes
    nb.run_cell(2)
    nb.wait_done(2)
    panel.wait_state("attached")
    nb.run_cell(3)
    bars = page.locator("#main-panel .jp-Notebook [data-testid=review-bar]")
    bars.nth(1).wait_for(timeout=60_000)
    nb.wait_done(4, timeout=90)  # the %%forge cell, one down since the insert
    inserted, edited = nb.cell(1).locator("[data-testid=review-bar]"), nb.cell(2).locator("[data-testid=review-bar]")
    assert nb.cell(1).locator(".jp-InputArea").inner_text().strip().endswith("w = 0")
    assert inserted.get_attribute("data-kind") == "insert"
    assert "Forge inserted this cell" in inserted.inner_text()
    assert edited.get_attribute("data-kind") == "edit"
    diff = edited.locator("[data-testid=review-diff]").inner_text()
    assert diff.splitlines() == ["- y = 2", "+ y = 20", "+ print(y)"]
    assert bars.count() == 2
    assert panel.tid("review-count").inner_text() == "2 cell changes to review"
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "notebook7-review.png"))

    inserted.locator("[data-testid=review-accept]").click()  # keep the new cell
    edited.locator("[data-testid=review-reject]").click()  # y = 2 again
    panel.tid("review-strip").wait_for(state="hidden")
    assert bars.count() == 0
    nb.save()
    saved = lab.read_notebook(name)
    assert [c.source for c in saved.cells] == ["x = 1", "w = 0", "y = 2", load, forge_cell("Tidy up.")]
    assert [c.id for c in saved.cells if c.source != "w = 0"] == ids
    assert "forge_review" not in json.dumps(saved.dict())
    assert not _own_errors(errors), [e.stack for e in _own_errors(errors)]
