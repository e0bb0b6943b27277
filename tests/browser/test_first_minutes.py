"""The first minutes with %%forge in a real JupyterLab (issue 12): the first cell's widget shows
at once while the model client loads, the kernel reads Busy for the whole run, a notebook saved
or reloaded mid-run reopens without "model not found", and tool cards say what happened
(no "null" arguments, "denied" and by whom, no repeated name).

Shares the module's JupyterLab, browser and fake model server (tests/browser/conftest.py).
"""

from __future__ import annotations

import time

import pytest

from forge_jupyter.notebook.warmup import LOADING
from forge_jupyter.testing import Turn, text, tool_call
from tests.browser.lab_helpers import NOTE_TOOL, PANEL, NotebookPage, forge_cell

pytestmark = pytest.mark.slow

LOAD = "%load_ext forge_jupyter"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def kernel_status(page) -> str:
    return page.evaluate(f"() => {PANEL}.sessionContext.session.kernel.status")


def status_bar(page) -> str:
    return " ".join(page.locator(".jp-StatusBar-Widget").all_inner_texts())


# Waits for the kernel's background warm-up (so the next cell runs warm).
WARM = ("from forge_jupyter.notebook.extension import controller\n"
        "controller().warmup.future.result(120)")


def run_cells(nb: NotebookPage, *indexes: int) -> None:
    for i in indexes:
        nb.run_cell(i)
        nb.wait_idle(i, timeout=150)


def test_the_first_cell_shows_its_widget_at_once_while_the_model_client_loads(page, lab, script):
    script.add(Turn.text("Hello from the first cell."))
    lab.write_notebook("first.ipynb", [LOAD, forge_cell("Say hello.")])
    nb = NotebookPage(page, lab, "first.ipynb").open()
    nb.run_cell(0)
    nb.wait_idle(0)
    page.evaluate("""() => {  // when the page first shows the widget's status, Run being 0
        window.__ran = performance.now();
        new MutationObserver((_, obs) => {
            if (document.querySelector('.jp-Notebook .forge-turn [data-testid=status]')) {
                window.__shown = performance.now() - window.__ran;
                obs.disconnect();
            }
        }).observe(document.body, {subtree: true, childList: true});
    }""")
    nb.run_cell(1)  # right after %load_ext: the model client is still loading
    status = nb.widget(1).locator("[data-testid=status]")
    status.wait_for()
    assert status.inner_text() == LOADING
    assert not script.requests, "the widget shows before anything is sent"
    print(f"\nfirst cell: the widget says it is loading {page.evaluate('window.__shown'):.0f} ms "
          "after Run (in the page: kernel, comm, the widget's first render)")
    nb.wait_idle(1, timeout=150)
    value = [o for o in nb.outputs(1) if o["output_type"] == "execute_result"]
    assert "Hello from the first cell." in value[0]["data"]["text/html"]
    assert not page.forge_errors


def test_the_kernel_reads_busy_while_a_forge_cell_runs(page, lab, script):
    words = " ".join(f"word{i}" for i in range(60))
    script.add(Turn([text(words, chunk=4)], chunk_delay=0.15))  # ~15 chunks a 0.15 s: ~2 s+
    lab.write_notebook("busy.ipynb", [LOAD, WARM, forge_cell("Talk a while.")])
    nb = NotebookPage(page, lab, "busy.ipynb").open()
    run_cells(nb, 0, 1)
    nb.run_cell(2)
    nb.widget(2).locator("[data-testid=text]").wait_for()  # the widget talks to the kernel now
    seen: list[tuple[str, str]] = []
    while True:
        sample = (kernel_status(page), status_bar(page))
        time.sleep(0.05)
        if not nb.busy(2):  # the sample may have caught the cell's own end
            break
        seen.append(sample)
    nb.wait_idle(2)
    assert len(seen) >= 10, seen
    idle = [s for s in seen if s[0] != "busy" or "Idle" in s[1]]
    assert not idle, f"the kernel read idle while the cell ran: {idle[:3]} of {len(seen)}"
    assert "Idle" in status_bar(page)  # and idle again once it ended
    assert not page.forge_errors


def test_a_notebook_saved_while_waiting_for_approval_reopens_with_a_note_not_an_error(
        page, lab, script):
    script.add(Turn([tool_call("write_note", {"text": "hello"})]), Turn.text("Wrote it."))
    lab.write_notebook("saved.ipynb", [LOAD, NOTE_TOOL, forge_cell("Note hello.")])
    nb = NotebookPage(page, lab, "saved.ipynb").open()
    nb.run_all()
    nb.widget(2).locator("[data-testid=approve-once]").wait_for(timeout=150_000)
    note = nb.cell(2).locator(".forge-saved-note")
    assert note.count() == 1 and not note.is_visible(), "the note hides while the widget is live"
    nb.save()  # what JupyterLab's autosave does every two minutes
    saved = lab.read_notebook("saved.ipynb").cells[2].outputs
    assert WIDGET_MIME in saved[0].data and "forge-saved-note" in saved[1].data["text/html"]

    lab.shutdown_kernels()  # the kernel is gone; the turn never ended
    page.goto("about:blank")
    nb = NotebookPage(page, lab, "saved.ipynb").open()
    area = nb.cell(2).locator(".jp-OutputArea")
    area.locator(".forge-saved-note").wait_for()
    page.wait_for_timeout(1000)  # the widget manager has given up on the model by now
    shown = area.inner_text()
    assert "model not found" not in shown and "Error displaying widget" not in shown, shown
    assert "%forge history" in shown and "still running when the notebook was saved" in shown, shown
    nb.screenshot("saved-mid-run-reopened")
    assert not page.forge_errors


def test_a_page_reloaded_mid_run_shows_the_finished_turn(page, lab, script):
    words = " ".join(f"token{i}" for i in range(80))
    script.add(Turn([text(words, chunk=4)], chunk_delay=0.2))  # ~20 chunks: ~4 s
    lab.write_notebook("reload.ipynb", [LOAD, WARM, forge_cell("Talk a while.")])
    nb = NotebookPage(page, lab, "reload.ipynb").open()
    run_cells(nb, 0, 1)
    nb.run_cell(2)
    nb.widget(2).locator("[data-testid=text]").wait_for()
    nb.save()
    page.reload()
    # The reloaded page was not the one that ran the cell: the kernel's final update of the
    # output never reaches it. The widget stays open, so it shows the finished turn.
    widget = page.locator(".jp-Notebook .jp-Cell").nth(2).locator(".forge-turn")
    widget.locator("[data-testid=status]").wait_for(timeout=90_000)
    page.wait_for_function(
        """() => { const s = document.querySelector('.jp-Notebook .forge-turn [data-testid=status]');
                   return s && s.textContent === 'Done'; }""", timeout=90_000)
    assert "token79" in widget.inner_text()
    area = page.locator(".jp-Notebook .jp-Cell").nth(2).locator(".jp-OutputArea")
    assert "model not found" not in area.inner_text()
    assert not area.locator(".forge-saved-note").is_visible()
    assert not page.forge_errors


def test_tool_cards_say_pending_denied_by_whom_and_do_not_repeat_the_name(page, lab, script):
    script.add(
        Turn([tool_call("variables", {}, fragments=6)], chunk_delay=0.4),  # pending ~2 s
        Turn([tool_call("write_note", {"text": "hi"})]),
        Turn.text("Understood, I will not write it."))
    lab.write_notebook("cards.ipynb", [LOAD, NOTE_TOOL, WARM, forge_cell("Look, then note hi.")])
    nb = NotebookPage(page, lab, "cards.ipynb").open()
    run_cells(nb, 0, 1, 2)
    nb.run_cell(3)
    card = nb.widget(3).locator(".forge-tool[data-tool=variables]")
    card.and_(page.locator("[data-state=pending]")).wait_for()
    assert "null" not in card.inner_text(), card.inner_text()
    card.and_(page.locator("[data-state=completed]")).wait_for()
    assert card.locator(".forge-tool-title").inner_text() != "variables"

    deny = nb.widget(3).locator("[data-testid=deny]")
    deny.wait_for()
    nb.widget(3).locator("[data-testid=approval-reason]").fill("not now")
    deny.click()
    # Read the live card in one go when it says denied: on a loaded machine the turn may end,
    # and the widget give way to its record, between two separate reads.
    state, said = page.wait_for_function("""() => {
        for (const c of document.querySelectorAll(
                '.jp-Notebook .forge-turn .forge-tool[data-tool=write_note][data-state=denied]')) {
            const s = c.querySelector('[data-testid=tool-state]');
            const d = c.querySelector('[data-testid=tool-denied]');
            if (s && d) return [s.textContent, d.textContent];
        }
        return null;
    }""").json_value()
    assert state == "denied"
    assert "Denied by you, in the widget — not now" in said, said
    nb.screenshot("tool-denied")
    nb.wait_idle(3)
    assert not (lab.root / "notes.txt").exists()
    # the static record that replaces the widget says the same
    record = nb.cell(3).locator(".forge-record")
    record.wait_for()
    said = record.inner_text()
    card = record.locator(".forge-tool[data-tool=write_note]")
    assert card.get_attribute("data-state") == "denied"
    assert card.locator(".forge-tool-state").inner_text() == "denied"
    assert "Denied by you, in the widget — not now" in said, said
    assert "· error" not in said and "variables — variables" not in said
    assert not page.forge_errors


def test_forge_history_and_sessions_are_tables_a_person_can_read(page, lab, script):
    answer = "The columns with gaps, at length: " + " ".join(f"word{i}" for i in range(150))
    script.add(Turn.text(answer))
    lab.write_notebook("history.ipynb", [LOAD, WARM, forge_cell("Which columns have gaps?\n"
                                                                "Answer at length."),
                                         "%forge history", "%forge sessions"])
    nb = NotebookPage(page, lab, "history.ipynb").open()
    run_cells(nb, 0, 1, 2, 3, 4)
    history = nb.cell(3).locator(".jp-OutputArea-output table.dataframe")
    assert history.locator("thead th").all_inner_texts() == [
        "", "pos", "message_id", "role", "text", "tokens_input", "tokens_output", "cost"]
    # every cell on one line: no column folds into a thin one of a word per line (a table
    # wider than the output scrolls instead)
    lines = history.evaluate("""t => [...t.querySelectorAll('tbody td')].map(td => {
        const r = document.createRange(); r.selectNodeContents(td);
        return r.getClientRects().length; })""")
    assert lines and max(lines) == 1, lines
    heights = history.evaluate("t => [...t.querySelectorAll('tbody tr')].map(r => r.offsetHeight)")
    font = history.evaluate("t => parseFloat(getComputedStyle(t.querySelector('td')).fontSize)")
    assert max(heights) < 3 * font, (heights, font)
    text_column = history.locator("tbody tr td:nth-child(5)")  # after the index, pos, id, role
    assert text_column.nth(1).bounding_box()["width"] > 20 * font  # not a thin column
    texts = text_column.all_inner_texts()
    assert texts[0] == "Which columns have gaps? Answer at length."
    assert texts[1].startswith("The columns with gaps, at length: word0") and texts[1].endswith("…")
    assert "columns shown" in nb.cell(3).locator(".forge-frame-note").inner_text()

    sessions = nb.cell(4).locator(".jp-OutputArea-output table.dataframe")
    shown = sessions.inner_text()
    assert "Which columns have gaps?" in shown and "openai/fake-model" in shown
    assert "NaN" not in shown and "ses_…" in shown
    nb.screenshot("forge-history-table")
    assert not page.forge_errors
