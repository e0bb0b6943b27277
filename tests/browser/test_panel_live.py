"""The forge side panel with live runs, in a real JupyterLab and Chromium: prompts sent from the
panel into the active notebook's kernel, %%forge cells followed live, approvals and Stop
answered from the panel.

One JupyterLab and one browser for the module (conftest.py); each test opens its notebook,
scripts the fake model server and watches the panel's DOM while the kernel runs.
"""

from __future__ import annotations

import json
import time

import pytest

from forge_jupyter.testing import Turn, text, tool_call
from tests.browser.lab_helpers import NOTE_TOOL, NotebookPage, forge_cell
from tests.browser.panel_page import PanelPage

pytestmark = pytest.mark.slow

LOAD = "%load_ext forge_jupyter"
WORDS = " ".join(f"word{i}" for i in range(120))


def grows_while(panel: PanelPage, turn, running) -> list[int]:
    """The lengths of the turn's text each time it changed, while ``running()``."""
    seen: list[int] = []
    while running():
        n = len(panel.text_of(turn))
        if n and (not seen or n != seen[-1]):
            seen.append(n)
        time.sleep(0.05)
    return seen


def test_a_prompt_from_the_panel_loads_forge_and_streams_in_the_notebooks_kernel(page, lab, script):
    script.add(Turn([text(WORDS, chunk=6)], chunk_delay=0.04))  # ~140 chunks over ~6 s
    lab.write_notebook("panel_prompt.ipynb", ["answer = 41 + 1"])
    nb = NotebookPage(page, lab, "panel_prompt.ipynb").open()
    nb.run_cell(0)
    nb.wait_idle(0)
    panel = PanelPage(page).open()
    # No %load_ext yet: the kernel refuses the panel's comm, and the panel says so.
    panel.wait_state("not-loaded")
    assert "forge not loaded" in panel.tid("panel-state").inner_text()

    panel.send("What is {answer}? Count some words.")
    turn = panel.turns().first
    turn.wait_for(timeout=60_000)
    assert turn.get_attribute("data-origin") == "panel"
    assert panel.root.get_attribute("data-state") == "attached"
    seen = grows_while(panel, turn, lambda: turn.get_attribute("data-live") == "true")
    assert len(seen) >= 4, f"the text should grow visibly while the turn runs, saw lengths {seen}"
    assert seen == sorted(seen)
    assert panel.text_of(turn).strip() == WORDS
    assert turn.locator("[data-testid=status]").inner_text() == "Done"
    # It ran in the notebook's kernel: {answer} interpolated from its namespace; no cell ran.
    asked = json.dumps(script.requests[-1].messages)
    assert "What is 42? Count some words." in asked
    assert turn.locator("[data-testid=panel-turn-prompt]").inner_text() == "What is 42? Count some words."
    assert nb.page.evaluate("window.jupyterapp.shell.currentWidget.content.widgets.length") == 1
    # The box is free again, and the totals know the session now (the fake model has no price).
    assert panel.tid("panel-prompt-status").inner_text() == ""
    panel.tid("cost-session").filter(has_text="cost unknown").wait_for()
    panel.screenshot("panel-prompt-streamed")
    assert not page.forge_errors


def test_a_forge_cell_turn_appears_live_in_the_panel_as_in_its_widget(page, lab, script):
    script.add(Turn([text(WORDS, chunk=6)], chunk_delay=0.04))
    lab.write_notebook("panel_cell.ipynb", [LOAD, forge_cell("Count some words in a cell.")])
    nb = NotebookPage(page, lab, "panel_cell.ipynb").open()
    panel = PanelPage(page).open()
    nb.run_all()
    turn = panel.turns().first
    turn.wait_for(timeout=60_000)  # %load_ext opened the comm; the panel said hello
    assert turn.get_attribute("data-origin") == "cell"
    assert turn.locator("[data-testid=panel-turn-prompt]").inner_text() == "Count some words in a cell."
    nb.widget(1).wait_for()
    both: list[tuple[int, int]] = []  # (panel, widget) text lengths while the cell runs
    while nb.busy(1):
        cell = nb.widget(1).locator("[data-testid=text]")
        pair = (len(panel.text_of(turn)), len(" ".join(cell.all_text_contents())))
        if pair[0] and (not both or pair != both[-1]):
            both.append(pair)
        time.sleep(0.05)
    growing = sorted({p for p, _ in both})
    assert len(growing) >= 4, f"the panel's text should grow while the cell runs: {both}"
    assert any(0 < w < len(WORDS) for _, w in both), "the cell's widget streamed at the same time"
    nb.wait_idle(1)
    panel.wait_turn_done(turn)
    assert panel.text_of(turn).strip() == WORDS
    # The cell kept its own record; the panel keeps the turn as it ended.
    value = [o for o in nb.outputs(1) if o["output_type"] == "execute_result"]
    assert WORDS in value[0]["data"]["text/html"]
    assert turn.locator("[data-testid=status]").inner_text() == "Done"

    # A page opened on a kernel that loaded forge before it: the panel opens the comm itself.
    NotebookPage(page, lab, "panel_cell.ipynb").open()
    panel = PanelPage(page).open()
    panel.wait_state("attached")
    assert panel.tid("panel-model").locator("option").first.inner_text() == "openai/fake-model (default)"
    assert not page.forge_errors


def test_approvals_of_a_cell_and_of_a_panel_prompt_are_answered_in_the_panel(page, lab, script):
    script.add(Turn([tool_call("write_note", {"text": "hello"})]), Turn.text("Wrote it."),
               Turn([tool_call("write_note", {"text": "again"})]), Turn.text("Understood."))
    probe = "from forge_jupyter.notebook.panel import HUB\nHUB.attached"
    lab.write_notebook("panel_approve.ipynb", [LOAD, NOTE_TOOL, forge_cell("Note hello."), probe])
    nb = NotebookPage(page, lab, "panel_approve.ipynb").open()
    for i in (0, 1, 3):
        nb.run_cell(i)
        nb.wait_idle(i)
    # Until a person opens the panel, the kernel does not count on it to answer approvals.
    assert nb.outputs(3)[0]["data"]["text/plain"] == "False"
    panel = PanelPage(page).open()
    panel.wait_state("attached")
    nb.run_cell(3)
    nb.wait_idle(3)
    assert nb.outputs(3)[0]["data"]["text/plain"] == "True"
    nb.run_cell(2)
    turn = panel.turns().first
    once = turn.locator("[data-testid=approve-once]")
    once.wait_for(timeout=60_000)
    nb.widget(2).locator("[data-testid=approve-once]").wait_for()  # asked in both places
    assert turn.locator("[data-testid=status]").inner_text() == "Waiting for your approval"
    panel.screenshot("panel-approval-asked")
    time.sleep(0.5)
    assert nb.busy(2), "the cell waits for the answer"
    once.click()
    nb.wait_idle(2, timeout=30)
    assert (lab.root / "notes.txt").read_text() == "hello\n"
    panel.wait_turn_done(turn)
    assert turn.locator("[data-testid=tool]").get_attribute("data-state") == "completed"

    # A prompt of the panel asks too; denied there with a reason the model reads.
    panel.send("Note again.")
    asked = panel.turn(1)
    deny = asked.locator("[data-testid=deny]")
    deny.wait_for(timeout=60_000)
    assert asked.get_attribute("data-origin") == "panel"
    asked.locator("[data-testid=approval-reason]").fill("not from the panel, thanks")
    deny.click()
    panel.wait_turn_done(asked)
    assert (lab.root / "notes.txt").read_text() == "hello\n"
    told = json.dumps(script.requests[-1].messages)
    assert "denied" in told and "not from the panel, thanks" in told
    card = asked.locator("[data-testid=tool]")
    assert card.get_attribute("data-state") == "denied"
    assert "not from the panel, thanks" in card.inner_text()
    assert "Understood." in panel.text_of(asked)
    assert not page.forge_errors


def test_stop_in_the_panel_ends_a_cell_and_a_queued_panel_prompt(page, lab, script):
    long_text = " ".join(f"token{i}" for i in range(400))  # ~25 s each if never stopped
    script.add(Turn([text(long_text, chunk=4)], chunk_delay=0.05),
               Turn([text(long_text, chunk=4)], chunk_delay=0.05))
    lab.write_notebook("panel_stop.ipynb", [LOAD, forge_cell("Talk for a long time.")])
    nb = NotebookPage(page, lab, "panel_stop.ipynb").open()
    panel = PanelPage(page).open()
    nb.run_all()
    cell_turn = panel.turns().first
    cell_turn.locator("[data-testid=text]").wait_for(timeout=60_000)
    assert nb.busy(1)
    # Sent while the cell runs, the prompt waits behind it and the box says so.
    panel.send("And then talk some more.")
    status = panel.tid("panel-prompt-status")
    status.filter(has_text="queued: the kernel is busy").wait_for()
    assert panel.tid("panel-stop").is_visible()
    clicked = time.monotonic()
    cell_turn.locator("[data-testid=stop]").click()  # the cell's run, stopped from the panel
    nb.wait_idle(1, timeout=15)
    assert time.monotonic() - clicked < 5, "Stop ends the cell promptly"
    value = [o for o in nb.outputs(1) if o["output_type"] == "execute_result"]
    assert value[0]["data"]["text/plain"].startswith("Message(assistant, aborted, ")
    assert cell_turn.locator("[data-testid=status]").inner_text() == "Stopped"

    # Then the queued prompt runs, and the box's Stop ends it.
    prompt_turn = panel.turn(1)
    prompt_turn.locator("[data-testid=text]").wait_for(timeout=30_000)
    assert prompt_turn.get_attribute("data-origin") == "panel"
    assert status.inner_text() == ""
    time.sleep(0.5)
    clicked = time.monotonic()
    panel.tid("panel-stop").click()
    panel.wait_turn_done(prompt_turn, timeout=10)
    assert time.monotonic() - clicked < 5
    assert prompt_turn.locator("[data-testid=status]").inner_text() == "Stopped"
    assert "token399" not in panel.text_of(prompt_turn)
    panel.tid("panel-stop").wait_for(state="hidden")
    assert not page.forge_errors


def open_file(page, lab, name: str) -> None:
    path = lab.path(name)  # as the server names it: under the module's folder
    page.evaluate(f"() => window.jupyterapp.commands.execute('docmanager:open', {{path: '{path}'}})")
    page.wait_for_function(f"() => window.jupyterapp.shell.currentWidget.context.path === '{path}'")


def test_the_panel_follows_the_active_notebook_and_outlives_a_kernel_restart(page, lab, script):
    long_text = " ".join(f"token{i}" for i in range(400))
    script.add(Turn([text(long_text, chunk=4)], chunk_delay=0.05), Turn.text("Back after the restart."))
    lab.write_notebook("other.ipynb", ["1 + 1"])
    lab.write_notebook("restart.ipynb", [LOAD, "%config Forge.model = 'openai/other-model'",
                                         "%config Forge.model = 'bad model;%rm -rf x'"])
    nb = NotebookPage(page, lab, "restart.ipynb").open()
    panel = PanelPage(page).open()
    nb.run_cell(0)
    nb.wait_idle(0)
    panel.wait_state("attached")
    panel.send("Talk until the kernel restarts.")
    turn = panel.turns().first
    turn.locator("[data-testid=text]").wait_for(timeout=60_000)
    page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.restartKernel()")
    panel.wait_turn_done(turn, timeout=30)
    assert "The kernel restarted" in turn.locator("[data-testid=notice]").inner_text()
    assert turn.locator("[data-testid=status]").inner_text() != "Working…"
    panel.wait_state("not-loaded")

    # Another notebook: the chat is its own; back again, the first one's is still there.
    open_file(page, lab, "other.ipynb")
    panel.tid("panel-context").filter(has_text="other.ipynb").wait_for()
    panel.tid("panel-empty").wait_for()
    assert panel.turns().count() == 0
    open_file(page, lab, "restart.ipynb")
    panel.tid("panel-context").filter(has_text="restart.ipynb").wait_for()
    assert panel.turns().count() == 1

    # The restarted kernel has no forge: the next prompt loads it again.
    panel.send("Are you back?")
    again = panel.turn(1)
    panel.wait_turn_done(again, timeout=60)
    assert panel.text_of(again).strip() == "Back after the restart."

    # The pickers take the kernel's names only when they are names.
    model = panel.tid("panel-model")
    nb.run_cell(1)
    nb.wait_idle(1)
    model.locator("option").first.filter(has_text="openai/other-model (default)").wait_for(state="attached")
    nb.run_cell(2)
    nb.wait_idle(2)
    model.locator("option").first.filter(has_text="default model").wait_for(state="attached")
    assert "bad model" not in model.inner_text()
    # A name that is not one (put in the page by hand) is refused before anything is sent.
    model.evaluate("""(s) => { const o = document.createElement('option');
        o.value = o.textContent = 'bad model;%rm -rf x'; s.append(o); s.value = o.value; }""")
    sent = len(script.requests)
    panel.send("Use a bad model name.")
    panel.tid("panel-prompt-status").filter(has_text="not one the panel sends").wait_for()
    time.sleep(1)
    assert panel.turns().count() == 2 and len(script.requests) == sent
    assert not page.forge_errors
