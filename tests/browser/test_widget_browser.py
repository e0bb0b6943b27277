"""The live widget in a real JupyterLab and a real browser, driven by %%forge cells.

One JupyterLab for the module; each test writes its notebook, scripts the fake model server,
runs the cells through JupyterLab's own commands and watches the DOM while the cell runs.
"""

from __future__ import annotations

import json
import re
import time

import pytest

from forge_jupyter.testing import Turn, delay, text, tool_call
from tests.browser.lab_helpers import NOTE_TOOL, NotebookPage, forge_cell

pytestmark = pytest.mark.slow

LOAD = "%load_ext forge_jupyter"

WORDS = " ".join(f"word{i}" for i in range(120))


def widget_text(nb: NotebookPage, index: int) -> str:
    texts = nb.widget(index).locator("[data-testid=text]")
    # textContent, not innerText: the latter depends on layout, which the clone changes
    return " ".join(texts.all_text_contents()) if texts.count() else ""


def test_text_arrives_live_while_the_cell_runs(page, lab, script):
    script.add(Turn([text(WORDS, chunk=6)], chunk_delay=0.04))  # ~140 chunks over ~6 s
    lab.write_notebook("live.ipynb", [LOAD, forge_cell("Count some words, slowly.")])
    nb = NotebookPage(page, lab, "live.ipynb").open()
    nb.run_all()
    nb.wait_busy(1)
    nb.widget(1).wait_for()
    seen: list[int] = []
    cloned = False
    while nb.busy(1):
        n = len(widget_text(nb, 1))
        if n and (not seen or n != seen[-1]):
            seen.append(n)
        if len(seen) == 3 and not cloned:
            nb.screenshot("live-streaming")
            # A second view of the notebook renders the widget again mid-run: it asks for a
            # snapshot and shows what streamed before it existed.
            page.evaluate("() => window.jupyterapp.commands.execute('docmanager:clone')")
            cloned = True
            late = page.locator(".jp-Notebook").nth(1).locator(".forge-turn [data-testid=text]")
            late.wait_for()
            assert len(late.inner_text()) >= n
        time.sleep(0.1)
    assert cloned
    assert len(seen) >= 4, f"the text should grow visibly while the cell runs, saw lengths {seen}"
    assert seen == sorted(seen)
    nb.wait_idle(1)
    # The live widget gave way to the static record; the answer is the cell's value.
    assert page.locator(".jp-Notebook [data-testid=forge-turn]").count() == 0  # the live widget (the record shares its classes)
    outputs = nb.outputs(1)
    answer = [o for o in outputs if o["output_type"] == "execute_result"]
    assert answer and WORDS in answer[0]["data"]["text/html"]
    assert not page.forge_errors


def record_tool_states(page) -> None:
    """Collect every data-state a tool card shows, in order, as the DOM changes."""
    page.evaluate("""() => {
        window.__toolStates = [];
        const look = () => {
            for (const el of document.querySelectorAll('.jp-Notebook .forge-tool')) {
                const s = el.dataset.state, seen = window.__toolStates;
                if (seen[seen.length - 1] !== s) seen.push(s);
            }
        };
        new MutationObserver(look).observe(document.body,
            {subtree: true, childList: true, attributes: true, attributeFilter: ['data-state']});
    }""")


SLOW_TOOL = '''import time
import forge_jupyter

@forge_jupyter.tool
def slow_tool(seconds: float) -> str:
    """Wait a little, then say so."""
    time.sleep(seconds)
    return f"waited {seconds} s"
'''


def test_tool_card_walks_pending_running_completed_and_the_saved_notebook_keeps_a_record(
        page, lab, script):
    # Argument fragments trickle in (pending), the tool sleeps (running), then completes.
    script.add(Turn([text("Let me check."), tool_call("slow_tool", {"seconds": 1.5}, fragments=8)],
                    chunk_delay=0.2),
               Turn.text("All done: the tool waited."))
    lab.write_notebook("tool.ipynb", [LOAD, SLOW_TOOL, forge_cell("Wait for me.")])
    nb = NotebookPage(page, lab, "tool.ipynb").open()
    record_tool_states(page)
    nb.run_all()
    card = nb.widget(2).locator(".forge-tool")
    card.and_(page.locator("[data-state=running]")).wait_for()
    assert card.locator("[data-testid=tool-state]").inner_text() == "running"
    # The first step's footer, live: openai/fake-model is not in litellm's price table.
    footer = nb.widget(2).locator("[data-testid=step-footer]").inner_text()
    assert "cost unknown" in footer and "$0" not in footer, footer
    assert re.search(r"\b[1-9][\d,]* out\b", footer), footer
    nb.screenshot("tool-running")
    nb.wait_idle(2)
    states = page.evaluate("window.__toolStates")
    assert states == ["pending", "running", "completed"], states

    nb.save()
    saved = lab.read_notebook("tool.ipynb").cells[2].outputs
    mimes = [m for o in saved for m in o.get("data", {})]
    assert "application/vnd.jupyter.widget-view+json" not in mimes
    record = [o for o in saved if o.output_type == "display_data" and o.data]
    assert len(record) == 1  # the saved-notebook note ended empty
    md = record[0].data["text/html"]
    assert "slow_tool" in md and "completed" in md and "waited 1.5 s" in md
    assert "Let me check." in md  # the first step's text is part of the work
    assert "All done" not in md  # the answer is the cell's value, not the record
    value = [o for o in saved if o.output_type == "execute_result"]
    assert "All done: the tool waited." in value[0].data["text/html"]
    assert not page.forge_errors


def test_approval_in_the_widget_lets_the_running_cell_finish(page, lab, script):
    script.add(Turn([tool_call("write_note", {"text": "hello"})]), Turn.text("Wrote it."),
               Turn([tool_call("write_note", {"text": "again"})]), Turn.text("Understood."))
    lab.write_notebook("approve.ipynb", [LOAD, NOTE_TOOL, forge_cell("Note hello."),
                                         forge_cell("Note again.")])
    nb = NotebookPage(page, lab, "approve.ipynb").open()
    record_tool_states(page)
    nb.run_cell(0)
    nb.wait_idle(0)
    nb.run_cell(1)
    nb.wait_idle(1)
    nb.run_cell(2)
    once = nb.widget(2).locator("[data-testid=approve-once]")
    once.wait_for()
    assert nb.widget(2).locator("[data-testid=approve-session]").is_visible()
    assert nb.widget(2).locator("[data-testid=status]").inner_text() == "Waiting for your approval"
    nb.screenshot("approval-asked")
    time.sleep(0.5)
    assert nb.busy(2), "the cell waits for the answer"
    once.click()
    nb.wait_idle(2, timeout=30)
    assert (lab.root / "notes.txt").read_text() == "hello\n"
    # A quick tool's running row may share a batch with its completed one (latest row wins).
    states = page.evaluate("window.__toolStates")
    assert states[0] == "pending" and states[-1] == "completed", states

    # Deny, with a reason the model reads.
    nb.run_cell(3)
    deny = nb.widget(3).locator("[data-testid=deny]")
    deny.wait_for()
    nb.widget(3).locator("[data-testid=approval-reason]").fill("not now, thanks")
    deny.click()
    nb.wait_idle(3, timeout=30)
    assert (lab.root / "notes.txt").read_text() == "hello\n"
    told = json.dumps(script.requests[-1].messages)
    assert "denied" in told and "not now, thanks" in told
    record = [o for o in nb.outputs(3) if o["output_type"] == "display_data"]
    assert "not now, thanks" in record[0]["data"]["text/html"]
    assert not page.forge_errors


def test_stop_aborts_the_run_and_ends_the_cell(page, lab, script):
    long_text = " ".join(f"token{i}" for i in range(400))
    script.add(Turn([text(long_text, chunk=4)], chunk_delay=0.05))  # ~25 s if never stopped
    lab.write_notebook("stop.ipynb", [LOAD, forge_cell("Talk for a long time.")])
    nb = NotebookPage(page, lab, "stop.ipynb").open()
    nb.run_all()
    stop = nb.widget(1).locator("[data-testid=stop]")
    stop.wait_for()
    nb.widget(1).locator("[data-testid=text]").wait_for()
    time.sleep(1.0)
    assert nb.busy(1)
    clicked = time.monotonic()
    stop.click()
    nb.wait_idle(1, timeout=15)
    assert time.monotonic() - clicked < 5, "Stop ends the cell promptly"
    value = [o for o in nb.outputs(1) if o["output_type"] == "execute_result"]
    assert value[0]["data"]["text/plain"].startswith("Message(assistant, aborted, ")
    assert "token399" not in value[0]["data"]["text/html"]
    # What streamed before Stop is counted, said to be estimated, and not priced as $0.
    shown = value[0]["data"]["text/html"]
    assert re.search(r"≈[1-9][\d,]* out", shown), shown
    assert "tokens estimated" in shown and "cost unknown" in shown and "$0" not in shown
    assert not page.forge_errors


PAYLOAD = ('Hello <img src=x onerror="window.__forgePwned=1"> and '
           '<script>window.__forgePwned=2</script> '
           '[click me](javascript:window.__forgePwned=3) '
           '<svg onload="window.__forgePwned=4"></svg>'
           '<iframe src="javascript:window.__forgePwned=5"></iframe> '
           '<a href="javascript:window.__forgePwned=6">link</a> end.')

UNSAFE = ("img[onerror], script:not([src]), iframe, object, embed, svg[onload], "
          "a[href^='javascript'], [onclick], [onload]")


def test_untrusted_model_html_runs_nothing(page, lab, script):
    from forge_jupyter.testing import reasoning

    script.add(Turn([reasoning(PAYLOAD, chunk=7), text(PAYLOAD, chunk=5)], chunk_delay=0.01))
    lab.write_notebook("xss.ipynb", [LOAD, forge_cell("Say something dangerous.")])
    nb = NotebookPage(page, lab, "xss.ipynb").open()
    nb.run_all()
    nb.widget(1).locator("[data-testid=text]").wait_for()
    page.wait_for_timeout(300)
    area = nb.cell(1).locator(".jp-OutputArea")
    assert area.locator(UNSAFE).count() == 0
    assert page.evaluate("window.__forgePwned") is None
    nb.wait_idle(1)
    page.wait_for_timeout(500)
    assert "Hello" in area.inner_text() and "end." in area.inner_text()
    # JupyterLab inserts a running kernel's (trusted) HTML output unsanitized: the record and
    # the cell's value (Message._repr_html_) must come sanitized from forge_jupyter.render.
    assert area.locator(UNSAFE).count() == 0, "raw model HTML reached a trusted output"
    # Clicking the model's link must not run it either.
    links = area.locator("a:visible", has_text="click me")
    for i in range(links.count()):
        links.nth(i).click()
    page.wait_for_timeout(300)
    assert page.evaluate("window.__forgePwned") is None
    assert not page.forge_errors


def test_a_question_card_shows_its_options_and_a_click_answers_the_model(page, lab, script):
    """The question tool (tools/question.py): the card shows the question and its options as
    buttons (text, never HTML); a click sends the answer over the widget's comm, the model
    reads it, the card says what was answered, and the record keeps it."""
    options = ["North", "South <b>bold</b>"]
    script.add(Turn([tool_call("question", {"question": "Which region first?", "options": options})]),
               Turn([delay(2.0), text("Starting with the South.")]))
    lab.write_notebook("question.ipynb", [LOAD, forge_cell("Plan the analysis.")])
    nb = NotebookPage(page, lab, "question.ipynb").open()
    nb.run_cell(0)
    nb.wait_idle(0)
    n = len(script.requests)
    nb.run_cell(1)
    card = nb.widget(1).locator("[data-testid=question]")
    card.wait_for()
    assert card.locator("[data-testid=question-text]").inner_text() == "Which region first?"
    buttons = card.locator("[data-testid=question-option]")
    assert buttons.all_inner_texts() == options
    assert card.locator("b").count() == 0  # the option's markup is text
    assert card.locator("[data-testid=question-input]").is_visible()
    assert nb.widget(1).locator("[data-testid=status]").inner_text() == "Waiting for your answer"
    tool = nb.widget(1).locator("[data-testid=tool][data-tool=question]")
    assert tool.locator("[data-testid=tool-state]").inner_text() == "awaiting your answer"
    nb.screenshot("question-asked")
    time.sleep(0.5)
    assert nb.busy(1), "the cell waits for the answer"
    buttons.nth(1).click()
    answered = nb.widget(1).locator("[data-testid=question-answer]")
    answered.wait_for(timeout=10_000)  # while the model's next reply is on its way (2 s)
    assert answered.inner_text() == "Answered by you, in the widget: South <b>bold</b>"
    nb.wait_idle(1, timeout=30)
    assert "question" in script.requests[n].tools
    told = [m for m in script.requests[n + 1].messages if m.get("role") == "tool"]
    assert told[-1]["content"] == "The user answered: South <b>bold</b>"
    record = [o for o in nb.outputs(1) if o["output_type"] == "display_data"]
    html = record[0]["data"]["text/html"]
    assert "The user answered: South &lt;b&gt;bold&lt;/b&gt;" in html and "<b>bold" not in html
    assert not page.forge_errors
