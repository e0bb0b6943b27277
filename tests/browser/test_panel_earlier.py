"""The side panel's chat is the notebook's session: opened late, or on a reopened notebook, it
shows the session's earlier turns read from the store (a page at a time, "Load earlier
turns"), then the live ones — each turn once. In a real JupyterLab and Chromium.
"""

from __future__ import annotations

import time

import pytest

from forge_jupyter.testing import Turn
from tests.browser.lab_helpers import MAX_SCREENSHOT_BYTES, NotebookPage, forge_cell, in_both_themes
from tests.browser.panel_page import PanelPage

pytestmark = pytest.mark.slow

LOAD = "%load_ext forge_jupyter"
def earlier_texts(panel: PanelPage) -> list[str]:
    return panel.tid("panel-earlier-exchange").all_inner_texts()


def test_a_panel_opened_after_a_cell_ran_shows_its_prompt_and_answer(page, lab, script, screenshots):
    script.add(Turn.text("Paris is the capital of France."))
    lab.write_notebook("earlier.ipynb", [LOAD, forge_cell("What is the capital of France?")])
    nb = NotebookPage(page, lab, "earlier.ipynb").open()
    nb.run_all()
    nb.wait_idle(1)
    nb.save()

    # The panel was never open while the cell ran: its chat is read from the session.
    panel = PanelPage(page).open()
    panel.wait_state("attached")
    exchange = panel.tid("panel-earlier-exchange").first
    exchange.wait_for(timeout=30_000)
    said = exchange.inner_text()
    assert "What is the capital of France?" in said
    assert "Paris is the capital of France." in said
    assert panel.turns().count() == 0
    assert not panel.tid("panel-empty").is_visible()

    # A turn run now shows live below it, and only once (not again from the store).
    script.add(Turn.text("Rome is the capital of Italy."))
    panel.send("And of Italy?")
    turn = panel.turns().first
    panel.wait_turn_done(turn, timeout=60)
    assert "Rome is the capital of Italy." in panel.text_of(turn)
    assert len(earlier_texts(panel)) == 1

    # The notebook closed and opened again: a new chat for it, read from the session.
    page.evaluate("() => window.jupyterapp.commands.execute('application:close-all')")
    nb = NotebookPage(page, lab, "earlier.ipynb").open()
    panel = PanelPage(page)
    if not panel.root.is_visible():
        panel.open()
    panel.wait_state("attached")
    panel.tid("panel-earlier-exchange").nth(1).wait_for(timeout=30_000)
    texts = earlier_texts(panel)
    assert len(texts) == 2, texts
    assert "Paris is the capital of France." in texts[0]
    assert "And of Italy?" in texts[1] and "Rome is the capital of Italy." in texts[1]
    assert not panel.tid("panel-load-earlier").is_visible()  # the whole session is shown

    for theme in in_both_themes(page):
        path = screenshots / f"panel-earlier-{theme}.png"
        panel.root.screenshot(path=str(path))
        assert path.stat().st_size < MAX_SCREENSHOT_BYTES
    assert not page.forge_errors


def test_the_chat_pages_back_through_a_long_session(page, lab, script):
    many = 32  # more turns than a page of messages holds (two messages each)
    for i in range(many):
        script.add(Turn.text(f"answer number {i}"))
    loop = ("ip = get_ipython()\n"
            f"for i in range({many}):\n"
            "    ip.run_cell_magic('forge', '', f'question number {i}')")
    lab.write_notebook("earlier_long.ipynb", [LOAD, loop])
    nb = NotebookPage(page, lab, "earlier_long.ipynb").open()
    nb.run_all()
    nb.wait_idle(1, timeout=180)

    panel = PanelPage(page).open()
    panel.wait_state("attached")
    panel.tid("panel-earlier-exchange").first.wait_for(timeout=30_000)
    more = panel.tid("panel-load-earlier")
    assert more.is_visible()
    texts = earlier_texts(panel)
    assert f"answer number {many - 1}" in texts[-1]
    assert not any("question number 0\n" in t for t in texts)
    shown = len(texts)
    assert 0 < shown < many
    more.click()
    panel.tid("panel-earlier-exchange").filter(has_text="question number 0").first.wait_for(timeout=30_000)
    texts = earlier_texts(panel)
    assert len(texts) == many, [t[:30] for t in texts]
    assert [f"answer number {i}" in t for i, t in enumerate(texts)] == [True] * many
    more.wait_for(state="hidden")
    assert not page.forge_errors


def test_a_notebook_reopened_while_its_kernel_is_busy_shows_its_chat_at_once(page, lab, script):
    script.add(Turn.text("The first answer."), Turn.text("The queued answer."))
    lab.write_notebook("earlier_busy.ipynb", [LOAD, forge_cell("First question."),
                                              "import time\ntime.sleep(20)",
                                              forge_cell("Queued question.")])
    nb = NotebookPage(page, lab, "earlier_busy.ipynb").open()
    nb.run_all()
    nb.wait_idle(1)
    nb.wait_busy(2)
    nb.save()
    page.evaluate("() => window.jupyterapp.commands.execute('application:close-all')")

    nb = NotebookPage(page, lab, "earlier_busy.ipynb")
    nb.page.goto(f"{lab.url}/lab/workspaces/busy/tree/{lab.path('earlier_busy.ipynb')}"
                 f"?reset&token={lab.token}")
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget"
                           " && window.jupyterapp.shell.currentWidget.sessionContext.session")
    panel = PanelPage(page).open()
    started = time.monotonic()
    # The kernel is busy: the header says so, and the chat is read from the store meanwhile.
    panel.tid("panel-state").filter(has_text="kernel busy").wait_for(timeout=10_000)
    exchange = panel.tid("panel-earlier-exchange").first
    exchange.wait_for(timeout=10_000)
    assert time.monotonic() - started < 10
    assert "The first answer." in exchange.inner_text()
    assert panel.root.get_attribute("data-state") != "attached", "the cell still runs"
    # When the kernel frees, the panel connects; the queued cell's turn shows live.
    panel.wait_state("attached", timeout=60)
    queued = panel.tid("panel-chat").filter(has_text="The queued answer.")
    queued.wait_for(timeout=60_000)
    # Its cell's output went to the closed page: the record comes back from the store, into
    # the notebook (what saving writes).
    page.wait_for_function("""() => JSON.stringify(window.jupyterapp.shell.currentWidget.content
        .widgets[3].model.outputs.toJSON()).includes('The queued answer.')""", timeout=30_000)
    [record] = nb.outputs(3)
    assert record["output_type"] == "display_data" and "text/html" in record["data"]
    assert nb.outputs(1), "a cell that kept its record is left as it is"
    assert not page.forge_errors
