"""What the review tests of tests/browser share: the permissions cell, the notebook's sources as
the page holds them, a cell's review bar, and the decisions the store recorded."""

from __future__ import annotations

import time

from forge_jupyter.store.duckdb.store import DuckDBStore
from tests.browser.lab_helpers import PANEL, Lab, NotebookPage
from tests.browser.panel_page import PanelPage

LOAD = "%load_ext forge_jupyter\n%config Forge.permissions = ['notebook_*=allow', 'write:*=allow']"


def sources(page) -> list[str]:
    """Every cell's source in the page's notebook model (what saving writes)."""
    return page.evaluate(f"() => {PANEL}.content.widgets.map(w => w.model.sharedModel.getSource())")


def wait_cell_done(page, cell_id: str) -> None:
    """The cell with ``cell_id`` (wherever it moved) has run to its end."""
    page.wait_for_function(f"""() => {{
        const c = {PANEL}.content.widgets.find(w => w.model.id === {cell_id!r});
        return c && c.model.executionCount !== null && !c.promptNode.textContent.includes('*');
    }}""", timeout=90_000)


def bar(nb: NotebookPage, index: int):
    """Cell ``index``'s review bar (none: count 0)."""
    return nb.cell(index).locator("[data-testid=review-bar]")


def reviews(lab: Lab, session_name: str, want: int) -> list[tuple[str, str]]:
    """The (edit, decision) of the named session's cell.reviewed events, sorted, once there
    are ``want`` (or what there is after 30 s: the comparison then fails)."""
    deadline = time.monotonic() + 30
    while True:
        try:
            store = DuckDBStore(lab.db)
            try:
                sid = store.find_session(session_name).id
                got = sorted((e.data["edit"], e.data["decision"])
                             for e in store.events(sid, type="cell.reviewed").items)
            finally:
                store.close()
        except Exception:  # the kernel writing the file this moment, or no session yet
            got = []
        if len(got) >= want or time.monotonic() > deadline:
            return got
        time.sleep(0.2)


def wait_turn_recorded(page, cell_id: str) -> None:
    """The %%forge cell ``cell_id``'s turn has left its record: the live widget replaced and the
    saved-notebook note emptied (a --async turn ends after its cell did; saving before that
    would leave the notebook dirty again)."""
    page.wait_for_function(f"""() => {{
        const c = {PANEL}.content.widgets.find(w => w.model.id === {cell_id!r});
        const outs = c ? c.model.outputs.toJSON() : [];
        const data = o => o.data || {{}};
        return outs.length > 0
            && outs.every(o => !('application/vnd.jupyter.widget-view+json' in data(o)))
            && outs.some(o => o.output_type === 'display_data' && !Object.keys(data(o)).length);
    }}""", timeout=60_000)


def open_attached(page, lab: Lab, name: str, load_index: int = 2) -> tuple[NotebookPage, PanelPage]:
    """The notebook ``name`` open with the side panel, its load cell (``load_index``) run and
    the panel attached to the kernel."""
    nb = NotebookPage(page, lab, name).open()
    panel = PanelPage(page).open()
    nb.run_cell(load_index)
    nb.wait_idle(load_index)
    panel.wait_state("attached")
    return nb, panel
