"""The cell tools (issue 28, item 1) at the comm: a real kernel whose ``%%forge`` cells are answered
by the fake model server, and this test as the page — it receives ``edit-cell`` on the side
panel's comm and answers ``cell-edited`` as labextension/src/cells/apply.ts does (what the page
does with it is the browser tests' part: tests/browser/test_cell_review.py)."""

from __future__ import annotations

import json
from typing import Any

import nbformat
import pytest

from forge_jupyter.testing import FakeModelServer, Turn, tool_call
from tests.notebook.panel_kernel import PanelKernel, tool_results
from tests.notebook.replay_nb import notebook, run, shown

CELL_TOOLS = {"notebook_insert", "notebook_edit", "notebook_delete", "notebook_move"}


@pytest.fixture(scope="module")
def kernel(model_server, tmp_path_factory):
    root = tmp_path_factory.mktemp("cells")
    k = PanelKernel({"FORGE_MODEL": "openai/gpt-4o-mini", "FORGE_API_BASE": model_server.openai_base,
                     "FORGE_API_KEY": "sk-fake", "FORGE_DB": str(root / "forge.duckdb"),
                     "FORGE_WIDGET": "off"}, root)
    # a shorter bound than the page's 10 s, so the no-answer test stays quick
    loaded = k.run("%load_ext forge_jupyter\nimport forge_jupyter.notebook.cells.edit as _e\n"
                   "_e.EDIT_WAIT = 1.0")
    assert loaded.status == "ok", loaded.text
    yield k
    k.close()


def _offered(request) -> set[str]:
    return {t["function"]["name"] for t in request.body.get("tools", [])}


class Page:
    """The page's side: approves each ask once, records each edit-cell, answers with ``reply``."""

    def __init__(self, kernel: PanelKernel, comm_id: str, reply=None) -> None:
        self.kernel, self.comm_id, self.reply = kernel, comm_id, reply
        self.edits: list[dict[str, Any]] = []

    def __call__(self, comm_id: str, data: dict[str, Any]) -> None:
        if comm_id != self.comm_id:
            return
        for op in data.get("ops", []):
            if op["op"] == "approval":
                self.kernel.send(comm_id, {"type": "approve", "request_id": op["request"]["id"],
                                           "answer": "once"}, wait=False)
        if data["kind"] == "edit-cell":
            self.edits.append(data)
            answer = self.reply(data) if self.reply else None
            if answer is not None:
                self.kernel.send(comm_id, {"type": "cell-edited", "request_id": data["request_id"],
                                           **answer}, wait=False)


def _ok(cell_id: str, index: int) -> dict[str, Any]:
    return {"ok": True, "error": "", "cell_id": cell_id, "index": index, "staged": True}


def test_the_cell_tools_are_offered_only_while_a_page_is_attached(kernel, server):
    server.add(Turn.text("No page."))
    assert kernel.run("%%forge\nHello").status == "ok"
    assert not _offered(server.requests[-1]) & CELL_TOOLS
    assert "notebook_read" in _offered(server.requests[-1])
    comm_id = kernel.open_panel()
    try:
        server.add(Turn.text("A page."), Turn.text("Planning."))
        assert kernel.run("%%forge\nHello").status == "ok"
        assert CELL_TOOLS <= _offered(server.requests[-1])
        # plan mode denies them: the model never sees them
        assert kernel.run("%%forge -a plan\nHello").status == "ok"
        assert not _offered(server.requests[-1]) & CELL_TOOLS
    finally:
        kernel.close_panel(comm_id)


def test_an_insert_goes_to_the_page_after_the_persons_yes_and_the_model_reads_what_it_did(
        kernel, server, panel):
    server.add(Turn([tool_call("notebook_insert", {"source": "df.describe()", "after_id": "c-load"})]),
               Turn([tool_call("notebook_edit", {"cell_id": "c-plot", "source": "df.plot()"})]),
               Turn.text("Done."))
    page = Page(kernel, panel, lambda e: _ok("c-new" if e["edit"] == "insert" else e["cell_id"], 2))
    r = kernel.run("%%forge\nAdd a summary cell.", on_comm=page)
    assert r.status == "ok", r.text
    insert, edit = page.edits
    assert (insert["edit"], insert["anchor_id"], insert["place"], insert["cell_type"],
            insert["source"], insert["auto_accept"]) == ("insert", "c-load", "after", "code",
                                                         "df.describe()", False)
    assert insert["session_id"].startswith("ses_") and insert["change_id"].startswith("chg_")
    assert (edit["edit"], edit["cell_id"], edit["source"]) == ("edit", "c-plot", "df.plot()")
    assert insert["change_id"] != edit["change_id"]
    [result] = tool_results(server)
    assert "Edited cell c-plot (now #2)" in result and "staged for the person's review" in result
    earlier = json.dumps([m for m in server.requests[-2].messages if m["role"] == "tool"])
    assert "Inserted cell c-new (now #2)" in earlier


def test_a_stale_or_foreign_cell_id_gets_the_pages_reason_and_how_to_get_ids(kernel, server, panel):
    server.add(Turn([tool_call("notebook_delete", {"cell_id": "from-other-nb"})]), Turn.text("Oh."))
    page = Page(kernel, panel, lambda e: {
        "ok": False, "error": "no cell with id 'from-other-nb' in this notebook (a.ipynb)",
        "cell_id": "", "index": -1, "staged": False})
    assert kernel.run("%%forge\nDelete it.", on_comm=page).status == "ok"
    [result] = tool_results(server)
    assert "no cell with id 'from-other-nb' in this notebook (a.ipynb)" in result
    assert "call it with no arguments" in result and "another notebook's ids do not work" in result


def test_bad_sources_and_ids_are_refused_before_the_page_sees_them(kernel, server, panel):
    server.add(Turn([tool_call("notebook_insert", {"source": "%%forge\nagain"}, id="c1"),
                     tool_call("notebook_edit", {"cell_id": "c-1", "source": "x" * 100_001}, id="c2"),
                     tool_call("notebook_insert", {"source": "data = '\x00\x01'"}, id="c3"),
                     tool_call("notebook_move", {"cell_id": "../x"}, id="c4")]),
               Turn.text("Refused."))
    page = Page(kernel, panel, lambda e: _ok("c-x", 0))
    assert kernel.run("%%forge\nTry.", on_comm=page).status == "ok"
    # a cell that calls forge is text until it runs (run in a turn, test_cell_run.py refuses it)
    assert [e["source"] for e in page.edits] == ["%%forge\nagain"]
    forge, huge, binary, bad_id = tool_results(server)
    assert "Inserted cell c-x" in forge
    assert "100,001 characters; a cell may hold at most 100,000" in huge and "x" * 200 not in huge
    assert "binary control characters" in binary
    assert "must be a cell id" in bad_id and "notebook_read" in bad_id


def test_a_page_that_does_not_answer_or_closes_mid_edit_is_a_clear_error(kernel, server):
    comm_id = kernel.open_panel()
    server.add(Turn([tool_call("notebook_delete", {"cell_id": "c-1"})]), Turn.text("Waited."))
    page = Page(kernel, comm_id)  # never answers
    assert kernel.run("%%forge\nDelete.", on_comm=page).status == "ok"
    [result] = tool_results(server)
    assert "did not apply the change within 1 s" in result and "notebook_read" in result

    def close(cid: str, data: dict[str, Any]) -> None:  # the notebook is closed meanwhile
        page(cid, data)
        if data["kind"] == "edit-cell":
            kernel.send(cid, {"type": "hello"}, wait=False)  # still listening, then gone:
            msg = kernel.kc.session.msg("comm_close", {"comm_id": cid, "data": {}})
            kernel.kc.shell_channel.send(msg)

    server.add(Turn([tool_call("notebook_delete", {"cell_id": "c-1"})]), Turn.text("Closed."))
    assert kernel.run("%%forge\nDelete.", on_comm=close).status == "ok"
    [result] = tool_results(server)
    assert "Nothing was changed: the notebook's page closed before it applied the change" in result


def test_a_notebook_open_in_two_pages_gets_each_change_once_from_the_page_last_used(kernel, server):
    # Two tabs of one notebook, or two people on one shared document: every page that got an
    # edit would apply it. It goes to one — the page last heard from; one that leaves it
    # unanswered (a closed tab whose comm never closed) is asked last from then on.
    first, second = kernel.open_panel(), kernel.open_panel()
    pages = {cid: Page(kernel, cid, lambda e: _ok("c-new", 1)) for cid in (first, second)}
    silent = Page(kernel, second)  # the second tab, gone without a word

    def both(cid: str, data: dict[str, Any]) -> None:
        pages[cid](cid, data)

    try:
        server.add(Turn([tool_call("notebook_insert", {"source": "1 + 1"})]), Turn.text("Once."))
        assert kernel.run("%%forge\nInsert.", on_comm=both).status == "ok"
        assert (len(pages[first].edits), len(pages[second].edits)) == (0, 1)
        kernel.send(first, {"type": "hello"})  # the person turns to the first tab
        server.add(Turn([tool_call("notebook_insert", {"source": "2 + 2"})]), Turn.text("Once."))
        assert kernel.run("%%forge\nInsert.", on_comm=both).status == "ok"
        assert (len(pages[first].edits), len(pages[second].edits)) == (1, 1)

        kernel.send(second, {"type": "hello"})
        pages[second] = silent
        server.add(Turn([tool_call("notebook_insert", {"source": "3 + 3"})]),
                   Turn([tool_call("notebook_insert", {"source": "3 + 3"})]), Turn.text("Done."))
        assert kernel.run("%%forge\nInsert.", on_comm=both).status == "ok"
        assert [e["source"] for e in silent.edits] == ["3 + 3"]  # asked once, no answer…
        assert [e["source"] for e in pages[first].edits] == ["2 + 2", "3 + 3"]  # …then the other
        assert "Inserted cell c-new" in tool_results(server)[0]
    finally:
        kernel.close_panel(first)
        kernel.close_panel(second)


def test_a_review_decision_is_recorded_in_the_session_with_who_and_when(kernel, server, panel):
    server.add(Turn([tool_call("notebook_insert", {"source": "df.head()"})]), Turn.text("Added."))
    page = Page(kernel, panel, lambda e: _ok("c-new", 1))
    assert kernel.run("%%forge\nAdd a cell.", on_comm=page).status == "ok"
    [insert] = page.edits
    session_id, change_id = insert["session_id"], insert["change_id"]
    decided = {"type": "cell-reviewed", "session_id": session_id, "change_id": change_id,
               "cell_id": "c-new", "edit": "insert", "decision": "rejected"}
    assert not [m for m in kernel.send(panel, decided) if m["kind"] == "notice"]
    # sent again (a page after a restart): no complaint, and once is the record
    assert not [m for m in kernel.send(panel, decided) if m["kind"] == "notice"]
    bad = kernel.send(panel, {**decided, "change_id": "chg_1", "edit": "rm -rf"})
    assert bad[0]["kind"] == "notice" and "edit is one of insert" in bad[0]["message"]
    r = kernel.run("import forge_jupyter\nev = forge_jupyter.current().events(type='cell.reviewed')\n"
                   f"ev = ev[ev.session_id == {session_id!r}]\n"
                   "print(len(ev), ev.iloc[-1]['actor'], ev.iloc[-1]['created_at'] is not None)\n"
                   "print(ev.iloc[-1]['data'])")
    assert r.status == "ok", r.text
    assert r.stdout.splitlines()[0] == "1 user True"
    assert change_id in r.stdout and "rejected" in r.stdout and "c-new" in r.stdout


def test_a_review_naming_a_change_its_session_never_made_is_not_recorded(kernel, server, panel):
    # The ids come from the notebook's metadata, which a cloned notebook writes: a decision is
    # recorded only for a change the named session's own cell tool made, to that cell.
    server.add(Turn([tool_call("notebook_insert", {"source": "1"})]), Turn.text("Added."))
    page = Page(kernel, panel, lambda e: _ok("c-real", 0))
    assert kernel.run("%%forge\nAdd.", on_comm=page).status == "ok"
    [insert] = page.edits
    real = {"type": "cell-reviewed", "session_id": insert["session_id"],
            "change_id": insert["change_id"], "cell_id": "c-real", "edit": "insert",
            "decision": "accepted"}
    other = kernel.run("import forge_jupyter\nprint(forge_jupyter.current().session().id)")
    assert other.status == "ok", other.text
    forgeries = [{**real, "change_id": "chg_" + "0" * 26},  # made up
                 {**real, "session_id": other.stdout.strip()},  # said of a real other session
                 {**real, "cell_id": "c-other"},  # the change, said of another cell
                 {**real, "edit": "delete"},  # …or as another kind of change
                 {**real, "session_id": "ses_" + "0" * 26},  # a session with no such change
                 {**real, "session_id": "ses_nonexistent"}]
    for forged in forgeries:
        replies = kernel.send(panel, forged)
        assert [m["kind"] for m in replies] == ["notice"], forged
        assert "That review was not recorded" in replies[0]["message"], forged
    r = kernel.run("import forge_jupyter\nev = forge_jupyter.current().events(type='cell.reviewed')\n"
                   f"print(ev.data.astype(str).str.contains({insert['change_id']!r}).sum(),"
                   " ev.data.astype(str).str.contains('chg_000').sum())")
    assert r.status == "ok", r.text
    assert r.stdout.split() == ["0", "0"]
    assert not [m for m in kernel.send(panel, real) if m["kind"] == "notice"]  # the real one is


def test_without_the_extension_the_cell_tools_are_not_offered_and_the_file_is_untouched(tmp_path):
    # nbclient (papermill, CI): no page answers the panel's comm, so no cell tool is offered;
    # a model that calls one anyway is told plainly what it needs, and nothing edits the file.
    with FakeModelServer() as server:
        server.add(Turn([tool_call("notebook_insert", {"source": "x = 1"})]), Turn.text("Could not."))
        nb = notebook("a = 1", "%%forge\nAdd a cell that sets x.")
        path = tmp_path / "analysis.ipynb"
        nbformat.write(nb, path)
        saved = path.read_bytes()
        done = run(nb, tmp_path, server.openai_base)
        first, second = server.requests
    assert not _offered(first) & CELL_TOOLS and "notebook_read" in _offered(first)
    [result] = [m["content"] for m in second.messages if m["role"] == "tool"]
    assert "need JupyterLab or Notebook 7 with forge-jupyter's extension" in result
    assert "nothing was changed" in result
    assert path.read_bytes() == saved
    assert [c.source for c in done.cells] == [c.source for c in nb.cells]


def test_restart_and_run_all_runs_an_accepted_agent_cell_once_and_replays_the_turn_that_wrote_it(
        tmp_path, model_server):
    # Recorded with a page: the agent inserts a cell, the person accepts it, the notebook is
    # saved with it as an ordinary cell. Then a fresh kernel runs the whole notebook headless
    # (nbclient, no page): the agent's cell runs once, as any cell; the %%forge turn replays
    # strictly — no model call — without inserting it again or running its code (a re-run
    # notebook_insert would fail there, no page, and strict replay would stop on it).
    server = model_server
    agent_cell = "runs = globals().get('runs', 0) + 1\nprint('runs', runs)"
    nb = notebook("%%forge\nAdd a cell that counts its runs.")
    path = tmp_path / "analysis.ipynb"
    nbformat.write(nb, path)
    env = {"FORGE_MODEL": "openai/gpt-4o-mini", "FORGE_API_BASE": server.openai_base,
           "FORGE_API_KEY": "sk-fake", "FORGE_DB": str(tmp_path / "forge.duckdb"),
           "FORGE_WIDGET": "off", "JPY_SESSION_NAME": "analysis.ipynb"}
    k = PanelKernel(env, tmp_path)
    try:
        assert k.run(nb.cells[0].source).status == "ok"
        comm_id = k.open_panel()
        server.add(Turn([tool_call("notebook_insert", {"source": agent_cell})]), Turn.text("Added."))
        page = Page(k, comm_id, lambda e: _ok("c-agent", 2))
        assert k.run(nb.cells[1].source, on_comm=page).status == "ok"
        assert [e["source"] for e in page.edits] == [agent_cell]
    finally:
        k.close()
    nb.cells.append(nbformat.v4.new_code_cell(agent_cell))  # accepted, saved by JupyterLab
    nbformat.write(nb, path)
    asked = len(server.requests)
    done = run(nb, tmp_path, server.openai_base, env={"FORGE_REPLAY": "strict"})
    assert len(server.requests) == asked  # replayed: no model call
    assert "Replayed" in shown(done.cells[1]) and "Added." in shown(done.cells[1])
    assert "need JupyterLab" not in shown(done.cells[1])
    assert shown(done.cells[2]).strip() == "runs 1"  # once, as an ordinary cell
    assert len(done.cells) == 3  # nothing inserted


def test_revert_to_here_takes_back_cells_and_files_through_the_page_and_forks(kernel, server,
                                                                               panel):
    # issue 28, item 5: the checkpoints the cell and file tools left, taken back by %forge revert
    server.add(Turn([tool_call("notebook_edit", {"cell_id": "c-plot", "source": "df.plot()"}),
                     tool_call("notebook_insert", {"source": "x = 1"}),
                     tool_call("write", {"path": "notes.txt", "content": "agent\n"})]),
               Turn.text("Changed."))
    page = Page(kernel, panel, lambda e: {**_ok("c-new" if e["edit"] == "insert" else e["cell_id"], 1),
                                          "before": {"source": "df.head()"}})
    (kernel.log_path.parent / "notes.txt").write_text("mine\n")
    assert kernel.run("%%forge --new\nChange things.", on_comm=page).status == "ok"
    assert (kernel.log_path.parent / "notes.txt").read_text() == "agent\n"
    asked: list[dict[str, Any]] = []

    def take_back(comm_id: str, data: dict[str, Any]) -> None:
        if data["kind"] == "revert-cells":
            asked.append(data)
            kernel.send(comm_id, {"type": "cells-reverted", "request_id": data["request_id"],
                                  "ok": True, "error": "", "outcomes": [
                                      {"change_id": s["change_id"], "detail": "",
                                       "outcome": "changed" if s["edit"] == "insert" else "restored"}
                                      for s in data["steps"]]}, wait=False)

    listed = kernel.run("%forge revert")  # the turns, numbered, with what each changed
    assert listed.status == "ok", listed.text
    [row] = [line for line in listed.text.splitlines() if "Change things." in line]
    assert row.split()[0] == "1" and row.split()[-2:] == ["1", "2"]  # 1 file, 2 cells
    r = kernel.run("%forge revert -1 --both", on_comm=take_back)
    assert r.status == "ok", r.text
    [sent] = asked
    insert, edit = sent["steps"]  # newest first
    assert (edit["edit"], edit["cell_id"], edit["before"], edit["after"]) == (
        "edit", "c-plot", "df.head()", "df.plot()")
    assert (insert["edit"], insert["cell_id"], insert["after"]) == ("insert", "c-new", "x = 1")
    assert (kernel.log_path.parent / "notes.txt").read_text() == "mine\n"
    said = r.stdout
    assert "restored: edited cell c-plot" in said and "restored: notes.txt" in said
    assert "not restored: inserted cell c-new: you changed it since" in said
    assert "continues in session" in said and "kernel's variables" in said
    check = kernel.run("import forge_jupyter\nf = forge_jupyter.current()\n"
                       "ev = f.events(type='revert')\n"
                       "print(len(ev), len(f.events(ev.iloc[-1]['session_id'], type='cell.changed')))")
    assert check.stdout.split() == ["1", "2"]
    # the fork before the session's first turn is a new empty session, now the current one
    empty = kernel.run("%forge revert 1")
    assert empty.status == "error" and "no turns to revert to yet" in empty.text
    bad = kernel.run("%forge revert 1 --code --both")
    assert bad.status == "error" and "not allowed with argument" in bad.text
    # code only: the turns stay in the conversation, so the next prompt tells the model
    server.add(Turn([tool_call("write", {"path": "notes.txt", "content": "again\n"})]),
               Turn.text("Wrote."), Turn.text("Noted."))
    assert kernel.run("%%forge\nWrite again.", on_comm=page).status == "ok"
    assert kernel.run("%forge revert -1 --code").status == "ok"
    assert (kernel.log_path.parent / "notes.txt").read_text() == "mine\n"
    assert kernel.run("%%forge\nGo on.").status == "ok"
    told = json.dumps(server.requests[-1].messages[-1])
    assert "the person reverted the code of turn 1" in told and "restored: notes.txt" in told
