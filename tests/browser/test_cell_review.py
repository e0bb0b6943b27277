"""The cell tools and their review (issue 28, items 1, 2 and 4), in JupyterLab and Chromium: a
turn's model inserts, edits, deletes and moves cells; the page applies each through
JupyterLab's notebook model and stages it (stripe, bar, diff, Accept / Reject, the panel's
count); what the person decides is what the saved notebook holds, and the staged marks
survive a reload of the page; and what the agent ran becomes cells when the person asks."""

from __future__ import annotations

import json

import nbformat

from forge_jupyter.store.duckdb.store import DuckDBStore
from forge_jupyter.testing import Turn, tool_call
from tests.browser.lab_helpers import PANEL, NotebookPage, forge_cell, in_both_themes
from tests.browser.panel_page import PanelPage
from tests.browser.review_page import LOAD, bar, open_attached, sources, wait_cell_done


def _start(page, lab, script, name: str, calls) -> tuple[NotebookPage, PanelPage, list[str]]:
    lab.write_notebook(name, ["x = 1", "y = 2", "z = 3", LOAD, forge_cell("Tidy up.")])
    ids = [c.id for c in lab.read_notebook(name).cells]
    script.add(Turn([tool_call(n, args(ids), id=f"c{i}") for i, (n, args) in enumerate(calls)]),
               Turn.text("Tidied."))
    nb, panel = open_attached(page, lab, name, 3)
    nb.run_cell(4)
    wait_cell_done(page, ids[4])
    return nb, panel, ids


def test_staged_edits_show_their_diff_survive_a_reload_and_save_what_was_decided(page, lab, script,
                                                                                screenshots):
    nb, panel, ids = _start(page, lab, script, "review.ipynb", [
        ("notebook_insert", lambda ids: {"source": "w = 0", "after_id": ids[0]}),
        ("notebook_edit", lambda ids: {"cell_id": ids[1], "source": "y = 20\nprint(y)"}),
        ("notebook_delete", lambda ids: {"cell_id": ids[2]}),
    ])
    results = [m["content"] for m in script.requests[-1].messages if m["role"] == "tool"]
    assert all("staged for the person's review" in r for r in results), results
    assert sources(page)[:3] == ["x = 1", "w = 0", "y = 20\nprint(y)"]
    # what the page shows: the inserted cell marked, the edited one with its diff, the count
    assert bar(nb, 1).get_attribute("data-kind") == "insert"
    assert "Forge inserted this cell" in bar(nb, 1).inner_text()
    assert bar(nb, 2).get_attribute("data-kind") == "edit"
    diff = bar(nb, 2).locator("[data-testid=review-diff]").inner_text()
    assert diff.splitlines() == ["- y = 2", "+ y = 20", "+ print(y)"]
    assert "forge-review-pending" in (nb.cell(2).get_attribute("class") or "")
    assert bar(nb, 0).count() == 0
    assert panel.tid("review-count").inner_text() == "3 cell changes to review"
    assert "z = 3" in panel.tid("review-deleted").inner_text()
    for theme in in_both_themes(page):  # the pictures of docs/notebook-workspace.md
        path = screenshots / f"cell-review-{theme}.png"
        page.screenshot(path=str(path))
        assert 0 < path.stat().st_size < 600_000

    # Saved and reloaded: the marks are in the notebook, so the review is still there.
    nb.save()
    saved = lab.read_notebook("review.ipynb")
    assert saved.cells[1].metadata["forge_review"]["inserted"] is True
    assert saved.metadata["forge_review"]["deleted"][0]["cell"]["source"] == "z = 3"
    nb = NotebookPage(page, lab, "review.ipynb").open()
    panel = PanelPage(page).open()
    panel.tid("review-count").filter(has_text="3 cell changes").wait_for()
    assert bar(nb, 2).locator("[data-testid=review-diff]").count() == 1

    bar(nb, 1).locator("[data-testid=review-accept]").click()  # keep the inserted cell
    bar(nb, 2).locator("[data-testid=review-reject]").click()  # the edit undone
    panel.tid("review-deleted").locator("button", has_text="Reject").click()  # z comes back
    panel.tid("review-strip").wait_for(state="hidden")
    assert bar(nb, 1).count() == 0 and bar(nb, 2).count() == 0
    nb.save()
    saved = lab.read_notebook("review.ipynb")
    assert [c.source for c in saved.cells][:4] == ["x = 1", "w = 0", "y = 2", "z = 3"]
    assert saved.cells[3].id == ids[2]  # re-inserted whole, its id too
    assert "forge_review" not in json.dumps(saved.dict())
    assert not page.forge_errors


def test_a_move_rejected_moves_back_and_a_persons_own_edit_accepts_the_change(page, lab, script):
    nb, panel, ids = _start(page, lab, script, "review_move.ipynb", [
        ("notebook_move", lambda ids: {"cell_id": ids[0], "after_id": ids[2]}),
        ("notebook_edit", lambda ids: {"cell_id": ids[1], "source": "y = 'agent'"}),
    ])
    assert sources(page)[:3] == ["y = 'agent'", "z = 3", "x = 1"]
    assert panel.tid("review-count").inner_text() == "2 cell changes to review"
    # The person types into the edited cell: it is theirs now (accepted with their edits).
    page.evaluate(f"() => {PANEL}.content.widgets[0].model.sharedModel.setSource(\"y = 'mine'\")")
    bar(nb, 0).wait_for(state="detached")
    panel.tid("review-count").filter(has_text="1 cell change to review").wait_for()
    panel.tid("review-reject-all").click()
    panel.tid("review-strip").wait_for(state="hidden")
    nb.save()
    saved = lab.read_notebook("review_move.ipynb")
    assert [c.source for c in saved.cells][:3] == ["x = 1", "y = 'mine'", "z = 3"]
    assert "forge_review" not in json.dumps(saved.dict())
    assert not page.forge_errors


def test_what_the_agent_ran_and_wrote_becomes_cells_on_request(page, lab, script):
    # Item 4: the python card's "Insert as cell" (the code and what it printed) and an answer's
    # code block's Insert; both ordinary cells after the active one, saved as the person's own.
    name = "keep.ipynb"
    lab.write_notebook(name, [LOAD + "\n%config Forge.permissions = ['python:*=allow']",
                              forge_cell("Compute it.")])
    ids = [c.id for c in lab.read_notebook(name).cells]
    script.add(Turn([tool_call("python", {"code": "print(6 * 7)"}, id="p1")]),
               Turn.text("It is 42. To keep it:\n\n```python\nanswer = 6 * 7\n```\n"))
    nb, panel = open_attached(page, lab, name, 0)
    nb.run_cell(1)
    wait_cell_done(page, ids[1])
    turn = panel.turn()
    panel.wait_turn_done(turn)
    card = turn.locator("[data-testid=tool][data-tool=python]")
    card.locator("[data-testid=tool-insert]").click()
    block = turn.locator("[data-testid=text] pre").first
    block.hover()
    assert turn.locator("[data-testid=code-copy]").is_visible()  # copy is offered too
    turn.locator("[data-testid=code-insert]").click()
    assert turn.locator("[data-testid=code-insert]").get_attribute("data-label") == "Inserted"
    assert "Insert" not in block.inner_text() and "Copy" not in block.inner_text()  # no text of it
    assert sources(page) == [LOAD + "\n%config Forge.permissions = ['python:*=allow']",
                              forge_cell("Compute it."), "print(6 * 7)", "answer = 6 * 7"]
    nb.save()
    saved = lab.read_notebook(name)
    ran, written = saved.cells[2], saved.cells[3]
    assert ran.cell_type == "code" and ran.source == "print(6 * 7)"
    assert [o.get("text", "").strip() for o in ran.outputs] == ["42"]  # what it printed
    assert written.source == "answer = 6 * 7" and written.outputs == []
    assert "forge_review" not in json.dumps(saved.dict())  # the person's own cells: no review
    assert not page.forge_errors


def test_revert_to_here_on_a_cells_record_restores_the_cells_and_files_and_forks(page, lab, script,
                                                                               screenshots):
    # Item 5: after the review was accepted, the record's "Revert to here" takes back the turn's
    # cell changes (through the page, like Reject) and its file, and the notebook continues in a
    # fork from before the turn.
    nb, panel, ids = _start(page, lab, script, "revert.ipynb", [
        ("notebook_insert", lambda ids: {"source": "w = 0", "after_id": ids[0]}),
        ("notebook_edit", lambda ids: {"cell_id": ids[1], "source": "y = 20"}),
        ("notebook_delete", lambda ids: {"cell_id": ids[2]}),
        ("write", lambda ids: {"path": "made.txt", "content": "by the agent\n"}),
    ])
    made = lab.root / "made.txt"
    assert made.read_text() == "by the agent\n"
    panel.tid("review-accept-all").click()
    panel.tid("review-strip").wait_for(state="hidden")
    assert sources(page)[:3] == ["x = 1", "w = 0", "y = 20"]
    assert panel.turn().locator("[data-testid=revert-turn]").is_visible()  # on the panel's turn too

    nb.cell(4).locator(".forge-record [data-testid=revert-turn]").click()
    choice = page.locator(".jp-Dialog button", has_text="Code and conversation")
    choice.wait_for()
    for theme in in_both_themes(page):  # the pictures of docs/notebook-workspace.md
        path = screenshots / f"revert-ask-{theme}.png"
        page.screenshot(path=str(path))
        assert 0 < path.stat().st_size < 600_000
    choice.click()
    result = page.locator("[data-testid=revert-result]")
    result.wait_for(timeout=60_000)
    said = result.inner_text()
    assert "restored: made.txt (deleted: the agent created it)" in said
    assert "restored: inserted cell" in said and f"restored: deleted cell {ids[2]}" in said
    assert "continues in session" in said and "kernel's variables" in said
    page.locator(".jp-Dialog button", has_text="OK").click()
    assert sources(page)[:4] == ["x = 1", "y = 2", "z = 3", LOAD]
    assert not made.exists()
    nb.save()
    saved = lab.read_notebook("revert.ipynb")
    assert [c.source for c in saved.cells][:3] == ["x = 1", "y = 2", "z = 3"]
    assert saved.cells[2].id == ids[2]  # the deleted cell back whole, its id too
    assert "forge_review" not in json.dumps(saved.dict())
    assert not page.forge_errors


def test_revert_to_here_on_a_panel_turn_takes_back_it_and_the_later_turn_keeping_the_chat(page, lab,
                                                                                        script):
    # Item 5 from the side panel: two prompts sent there change cells and a file; the first
    # turn's "Revert to here", code only, takes back both turns' changes (newest first) and
    # leaves the conversation as it was.
    name = "revert_panel.ipynb"
    lab.write_notebook(name, ["x = 1", "y = 2", LOAD])
    ids = [c.id for c in lab.read_notebook(name).cells]
    script.add(Turn([tool_call("notebook_insert", {"source": "w = 0", "after_id": ids[0]}, id="i"),
                     tool_call("write", {"path": "made.txt", "content": "by the agent\n"}, id="w")]),
               Turn.text("Inserted w and wrote made.txt."),
               Turn([tool_call("notebook_edit", {"cell_id": ids[1], "source": "y = 20"}, id="e")]),
               Turn.text("Set y to 20."))
    nb, panel = open_attached(page, lab, name)
    for prompt, count in (("Add w and a file.", 1), ("Now y.", 2)):
        panel.send(prompt)
        panel.turns().nth(count - 1).wait_for()
        panel.wait_turn_done(panel.turn(count - 1))
    # the first turn's change still pending beside the second's: one review of both
    panel.tid("review-count").filter(has_text="2 cell changes to review").wait_for()
    panel.tid("review-accept-all").click()
    panel.tid("review-strip").wait_for(state="hidden")
    made = lab.root / "made.txt"
    assert made.read_text() == "by the agent\n"
    assert sources(page) == ["x = 1", "w = 0", "y = 20", LOAD]

    panel.turn(0).locator("[data-testid=revert-turn]").click()
    page.locator(".jp-Dialog").get_by_role("button", name="Code", exact=True).click()
    result = page.locator("[data-testid=revert-result]")
    result.wait_for(timeout=60_000)
    said = result.inner_text()
    assert said.startswith("Reverted to turn 1 (“Add w and a file.”): code only, the conversation kept.")
    assert "restored: made.txt (deleted: the agent created it)" in said
    assert f"restored: edited cell {ids[1]}" in said and "restored: inserted cell" in said
    assert "not restored" not in said and "continues in session" not in said
    assert "kernel's variables" in said
    page.locator(".jp-Dialog button", has_text="OK").click()
    assert sources(page) == ["x = 1", "y = 2", LOAD]
    assert not made.exists()
    assert panel.turns().count() == 2  # the conversation kept: both turns still in the chat
    nb.save()
    saved = lab.read_notebook(name)
    assert [c.source for c in saved.cells] == ["x = 1", "y = 2", LOAD]
    assert [c.id for c in saved.cells] == ids
    assert "forge_review" not in json.dumps(saved.dict())
    assert not page.forge_errors


def test_a_review_mark_a_notebook_brought_with_it_records_nothing_and_says_so(page, lab, screenshots):
    # A notebook from elsewhere (cloned, downloaded) writes its own metadata, marks included:
    # Accept on a mark naming a change no session of this store made is refused, visibly.
    lab.write_notebook("brought.ipynb", ["x = 1", "y = 2", LOAD])
    path = lab.root / "brought.ipynb"
    nb_file = nbformat.read(path, as_version=4)
    nb_file.cells[0].metadata["forge_review"] = {
        "changes": ["chg_01forgedforgedforgedforged"], "session": "ses_01forgedforgedforgedforg",
        "inserted": True, "after": "x = 1"}
    nbformat.write(nb_file, path)
    nb, panel = open_attached(page, lab, "brought.ipynb", 2)
    assert bar(nb, 0).get_attribute("data-kind") == "insert"
    bar(nb, 0).locator("[data-testid=review-accept]").click()
    notice = panel.tid("panel-notice").filter(has_text="That review was not recorded")
    notice.wait_for(timeout=15_000)
    assert "chg_01forgedforgedforgedforged" in notice.inner_text()
    assert "is not one the agent made" in notice.inner_text()
    assert sources(page)[:2] == ["x = 1", "y = 2"]  # the page's own decision stands: kept
    store = DuckDBStore(lab.db)
    try:
        assert not [e for e in store.iter_events(type="cell.reviewed")
                    if e.data.get("change_id") == "chg_01forgedforgedforgedforged"]
    finally:
        store.close()
    for theme in in_both_themes(page):
        shot = screenshots / f"review-refused-{theme}.png"
        page.screenshot(path=str(shot))
        assert 0 < shot.stat().st_size < 600_000
    assert not page.forge_errors
