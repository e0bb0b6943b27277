"""Review when two things happen at once (issue 28, bad input), in JupyterLab and Chromium: two
turns editing one notebook at the same time, and a kernel restart with changes pending. What
the person sees stays reviewable, nothing they wrote is lost, and each decision is recorded in
the session whose change it was."""

from __future__ import annotations

import json
import threading
import time

from forge_jupyter.testing import Turn, tool_call
from tests.browser.lab_helpers import forge_cell
from tests.browser.review_page import (
    LOAD,
    bar,
    open_attached,
    reviews,
    sources,
    wait_cell_done,
    wait_turn_recorded,
)


def test_two_turns_editing_at_once_keep_each_others_pending_changes(page, lab, script):
    # Two sessions' turns at once in one notebook: `%%forge --async` (alpha) is still running
    # when a second cell's turn (beta) edits the very cell alpha edited. Neither resolves the
    # other's changes; the cell is one review against the person's source; Reject restores it,
    # and each decision is recorded in the session whose change it was.
    name = "two_turns.ipynb"
    alpha, beta = forge_cell("Alpha.", "--async --new -s alpha"), forge_cell("Beta.", "--new -s beta")
    lab.write_notebook(name, ["x = 1", "y = 2", LOAD, alpha, beta])
    ids = [c.id for c in lab.read_notebook(name).cells]
    gate = threading.Event()  # alpha's last model step waits until beta's turn is over
    script.add(Turn([tool_call("notebook_edit", {"cell_id": ids[1], "source": "y = 'alpha'"}, id="a1"),
                     tool_call("notebook_insert", {"source": "a = 1", "after_id": ids[0]}, id="a2")]),
               lambda req: (gate.wait(60), Turn.text("Alpha done."))[1],
               Turn([tool_call("notebook_edit", {"cell_id": ids[1], "source": "y = 'beta'"}, id="b1")]),
               Turn.text("Beta done."))
    nb, panel = open_attached(page, lab, name)
    asked = len(script.requests)
    try:
        nb.run_cell(3)
        panel.tid("review-count").filter(has_text="2 cell changes to review").wait_for(timeout=60_000)
        while len(script.requests) < asked + 2:  # alpha is waiting on its next model step
            time.sleep(0.05)
        nb.run_cell(5)
        wait_cell_done(page, ids[4])
        assert sources(page)[:3] == ["x = 1", "a = 1", "y = 'beta'"]
        # beta's edit joined alpha's review of the cell: one bar, its diff against y = 2
        assert bar(nb, 2).locator("[data-testid=review-diff]").inner_text().splitlines() == [
            "- y = 2", "+ y = 'beta'"]
        assert panel.tid("review-count").inner_text() == "2 cell changes to review"
    finally:
        gate.set()
    wait_turn_recorded(page, ids[3])
    assert "Alpha done." in nb.cell(4).inner_text()  # its cell, one down since the insert
    assert panel.tid("review-count").inner_text() == "2 cell changes to review"  # still pending

    bar(nb, 2).locator("[data-testid=review-reject]").click()  # both turns' edits of y undone
    bar(nb, 1).locator("[data-testid=review-accept]").click()  # alpha's new cell kept
    panel.tid("review-strip").wait_for(state="hidden")
    nb.save()
    saved = lab.read_notebook(name)
    assert [c.source for c in saved.cells] == ["x = 1", "a = 1", "y = 2", LOAD, alpha, beta]
    assert "forge_review" not in json.dumps(saved.dict())
    assert reviews(lab, "alpha", 2) == [("edit", "rejected"), ("insert", "accepted")]
    assert reviews(lab, "beta", 1) == [("edit", "rejected")]
    assert not page.forge_errors


def test_a_kernel_restart_with_changes_pending_keeps_them_reviewable_and_records_the_decisions(
        page, lab, script):
    # The staged changes live in the notebook, not the kernel: after a restart they are still
    # there to review, and Accept / Reject still act; the decisions made while forge is not
    # loaded are kept by the page and recorded in the turn's session once it is loaded again.
    name = "restart.ipynb"
    turn = forge_cell("Tidy up.", "--new -s restart")
    lab.write_notebook(name, ["x = 1", "y = 2", LOAD, turn])
    ids = [c.id for c in lab.read_notebook(name).cells]
    script.add(Turn([tool_call("notebook_insert", {"source": "w = 0", "after_id": ids[0]}, id="i"),
                     tool_call("notebook_edit", {"cell_id": ids[1], "source": "y = 20"}, id="e")]),
               Turn.text("Tidied."))
    nb, panel = open_attached(page, lab, name)
    nb.run_cell(3)
    wait_cell_done(page, ids[3])
    panel.tid("review-count").filter(has_text="2 cell changes to review").wait_for()

    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:restart-kernel'); }")
    page.locator(".jp-Dialog button", has_text="Restart").click()  # as Kernel → Restart Kernel…
    panel.wait_state("not-loaded")
    assert "forge not loaded" in panel.tid("panel-state").inner_text()
    assert bar(nb, 1).get_attribute("data-kind") == "insert"
    assert bar(nb, 2).locator("[data-testid=review-diff]").inner_text().splitlines() == [
        "- y = 2", "+ y = 20"]
    assert panel.tid("review-count").inner_text() == "2 cell changes to review"
    bar(nb, 2).locator("[data-testid=review-reject]").click()
    bar(nb, 1).locator("[data-testid=review-accept]").click()
    panel.tid("review-strip").wait_for(state="hidden")
    assert sources(page)[:3] == ["x = 1", "w = 0", "y = 2"]
    assert reviews(lab, "restart", 0) == []  # no forge in the kernel to record them yet

    nb.run_cell(3)  # %load_ext again (one down since the insert)
    panel.wait_state("attached")
    assert reviews(lab, "restart", 2) == [("edit", "rejected"), ("insert", "accepted")]
    nb.save()
    saved = lab.read_notebook(name)
    assert [c.source for c in saved.cells] == ["x = 1", "w = 0", "y = 2", LOAD, turn]
    assert "forge_review" not in json.dumps(saved.dict())
    assert not page.forge_errors
