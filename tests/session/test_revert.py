"""Revert to here (session/revert.py): the file tools' checkpoints put back, what the person
changed since left alone and named, the conversation forked before the turn — against a real
DuckDB file, through litellm to the fake model server."""

from __future__ import annotations

from forge_jupyter.session import revert as core
from forge_jupyter.testing import Turn, tool_call

ALLOW = ["write:*=allow", "edit:*=allow"]


def _turn(server, *calls):
    server.add(Turn([tool_call(name, args) for name, args in calls]), Turn.text("done"))


def _revert(session, which: str, mode: str = "both") -> core.Report:
    messages = session.messages()
    turn = core.find_turn(messages, which)
    report = core.Report(turn, mode)
    files, _cells = core.checkpoints(session.forge.store, messages, turn)
    core.restore_files(session.forge.store, session.id, session.info.directory, files, report)
    if mode != "code":
        report.session_id = core.fork_before(session, turn).id
    core.record(session, report, "user")
    return report


def test_revert_restores_files_leaves_the_persons_edits_and_forks_the_conversation(
        make_forge, server, tmp_path):
    root = tmp_path / "work"
    root.mkdir()
    (root / "kept.txt").write_text("original\n")
    (root / "mine.txt").write_text("mine before\n")
    forge = make_forge(db="duckdb", builtin_tools=True, root=str(root), permissions=ALLOW)
    session = forge.session("s")
    _turn(server, ("write", {"path": "kept.txt", "content": "turn one\n"}))
    session.prompt("first")
    _turn(server, ("edit", {"path": "kept.txt", "old_string": "turn one", "new_string": "turn two"}),
          ("write", {"path": "new/made.txt", "content": "created\n"}),
          ("write", {"path": "mine.txt", "content": "agent's\n"}))
    session.prompt("second")
    (root / "mine.txt").write_text("the person's own edit\n")  # changed since: must stay

    report = _revert(session, "2")

    assert (root / "kept.txt").read_text() == "turn one\n"  # turn 1's change stays
    assert not (root / "new" / "made.txt").exists()  # the agent created it: deleted
    assert (root / "mine.txt").read_text() == "the person's own edit\n"
    assert any(x.startswith("kept.txt") for x in report.restored)
    assert any(x.startswith("new/made.txt") and "deleted" in x for x in report.restored)
    assert [x for x in report.left if x.startswith("mine.txt")] == [
        "mine.txt: changed since the agent wrote it (by you or other code), so it was left as it is"]
    text = "\n".join(report.lines())
    assert "kernel's variables" in text and "not restored: mine.txt" in text

    # the conversation: a fork holding turn 1 only, the original session untouched
    fork = forge.session(report.session_id)
    assert [m.text for m in fork.messages() if m.role == "user"] == ["first"]
    assert fork.info.forked_from_session == session.id
    assert len([m for m in session.messages() if m.role == "user"]) == 2
    event = forge.store.events(session.id, type="revert").items[-1]
    assert event.actor == "user" and event.data["turn"] == 2 and event.data["mode"] == "both"

    # reverting turn 1 too (code only) in the original: the file goes back to its first bytes
    report = _revert(session, "1", mode="code")
    assert (root / "kept.txt").read_text() == "original\n"
    assert report.session_id is None


def test_what_was_never_kept_is_named_and_left(make_forge, server, tmp_path, monkeypatch):
    monkeypatch.setattr("forge_jupyter.tools.checkpoint.MAX_KEPT", 64)
    root = tmp_path / "work"
    root.mkdir()
    (root / "big.txt").write_text("x" * 100)
    forge = make_forge(db="duckdb", builtin_tools=True, root=str(root), permissions=ALLOW)
    session = forge.session("s")
    _turn(server, ("write", {"path": "big.txt", "content": "small\n"}))
    session.prompt("shrink it")
    stored = forge.store.events(session.id, type="file.changed").items
    assert "before" not in stored[0].data  # nothing of the big file is in the store

    report = _revert(session, "-1", mode="code")

    assert (root / "big.txt").read_text() == "small\n"
    assert report.left == ["big.txt: its earlier content was not kept: too big to keep "
                           "(100 bytes; a checkpoint keeps 64)"]
    assert core.find_turn(session.messages(), "1").number == 1


def test_an_apply_patch_delete_and_move_are_put_back(make_forge, server, tmp_path):
    root = tmp_path / "work"
    root.mkdir()
    (root / "gone.txt").write_text("keep me\n")
    (root / "old.txt").write_text("moving\n")
    forge = make_forge(builtin_tools=True, root=str(root), model="openai/gpt-5",
                       permissions=["apply_patch:*=allow"])
    session = forge.session("s")
    patch = ("*** Begin Patch\n*** Delete File: gone.txt\n*** Update File: old.txt\n"
             "*** Move to: new.txt\n@@\n-moving\n+moved\n*** End Patch")
    _turn(server, ("apply_patch", {"input": patch}))
    session.prompt("tidy")
    assert not (root / "gone.txt").exists() and (root / "new.txt").read_text() == "moved\n"

    report = _revert(session, "1", mode="code")

    assert (root / "gone.txt").read_text() == "keep me\n"
    assert (root / "old.txt").read_text() == "moving\n" and not (root / "new.txt").exists()
    assert sorted(report.restored) == ["gone.txt", "new.txt (deleted: the agent created it)",
                                       "old.txt"]


def test_an_imported_sessions_checkpoints_are_records_a_revert_never_acts_on(
        make_forge, server, tmp_path):
    # A session file is anyone's: a crafted checkpoint would rewrite, delete or insert at the
    # next "Revert to here" — in three spellings: rewrite a file, delete one, put back a cell.
    import json

    from forge_jupyter.tools.checkpoint import digest

    root = tmp_path / "work"
    root.mkdir()
    source = make_forge(db="duckdb", builtin_tools=True, root=str(root), permissions=ALLOW)
    session = source.session("s")
    _turn(server, ("write", {"path": "notes.txt", "content": "agent\n"}))
    session.prompt("write it")
    doc = json.loads(source.export_session(session, tmp_path / "s.json").read_text())
    [real] = [e for e in doc["events"] if e["type"] == "file.changed"]
    victims = {"keep.txt": b"precious\n", "gone.txt": b"also mine\n"}
    for name, body in victims.items():
        (root / name).write_bytes(body)
    # three ids of the real one's shape, none of them the real one (its last letter may be any)
    a, b, c = [real["id"][:-1] + x for x in "WXYZ" if x != real["id"][-1]][:3]
    forged = [
        {**real, "id": a, "data": {**real["data"], "path": "keep.txt",
         "root": str(root), "existed": True, "before": "pwned\n", "after": digest(victims["keep.txt"])}},
        {**real, "id": b, "data": {**real["data"], "path": "gone.txt",
         "root": str(root), "existed": False, "after": digest(victims["gone.txt"])}},
        {**real, "id": c, "type": "cell.changed",
         "data": {"change_id": "chg_1", "edit": "delete", "cell_id": "x",
                  "cell": {"cell_type": "code", "source": "import os; os.system('x')"}}},
    ]
    doc["events"] += forged
    hostile = tmp_path / "hostile.json"
    hostile.write_text(json.dumps(doc))
    target = make_forge(builtin_tools=True, root=str(root))
    imported = target.import_session(hostile)
    kinds = {e.type for e in target.store.events(imported.id).items}
    assert {"imported.file.changed", "imported.cell.changed"} <= kinds  # kept, as records
    assert not kinds & {"file.changed", "cell.changed"}

    messages = imported.messages()
    turn = core.find_turn(messages, "-1")
    files, cells = core.checkpoints(target.store, messages, turn)
    assert files == [] and cells == []  # nothing to act on
    report = core.Report(turn, "code")
    core.restore_files(target.store, imported.id, imported.info.directory, files, report)
    assert {n: (root / n).read_bytes() for n in victims} == victims
