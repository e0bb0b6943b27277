"""Export to JSON and import back; Parquet export of the views."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from forge_jupyter.errors import DuplicateId, NotFound
from forge_jupyter.export import UNFINISHED, ImportFailed, atomic_write
from forge_jupyter.message import Message, TextPart, ToolPart, now
from forge_jupyter.store.ops import AppendMessage, PutMessage, PutPart
from forge_jupyter.store.sql.views import VIEW_NAMES
from tests.frames.frames_helpers import all_events, live_sessions


def other_kind(run) -> str:
    """The backend the run did not use: every test moves a session from one to the other."""
    return "duckdb" if run.kind == "memory" else "memory"


def snapshot(store, session_id: str, *, keep_session_id: bool = True) -> list[dict]:
    """A session's timeline as plain data: each message with its parts, in order."""
    out = []
    for m in store.iter_timeline(session_id):
        row = m.model_dump()
        parts = [p.model_dump() for p in m.parts]
        if not keep_session_id:
            row.pop("session_id")
            for p in parts:
                p.pop("session_id")
        out.append({**row, "parts": parts})
    return out


def test_export_then_import_gives_back_the_session(run, fresh, tmp_path):
    source = run.forge
    alpha = run.sessions["alpha"]
    path = source.export_session("alpha", tmp_path / "alpha.json")
    assert path == tmp_path / "alpha.json" and not list(tmp_path.glob(".*tmp"))

    forge = fresh(other_kind(run))
    imported = forge.import_session(path)
    assert imported.id == alpha.id and imported.name == "alpha"
    assert snapshot(forge.store, alpha.id) == snapshot(source.store, alpha.id)
    original, copy = source.store.get_session(alpha.id), forge.store.get_session(alpha.id)
    for field in ("id", "name", "agent", "model", "directory", "created_at", "metadata"):
        assert getattr(copy, field) == getattr(original, field), field
    # the events came along, and the import is one more
    assert [e.id for e in all_events(forge.store, alpha.id) if e.type != "import"] == [
        e.id for e in all_events(source.store, alpha.id)]
    [event] = all_events(forge.store, alpha.id, type="import")
    assert event.data["original_session_id"] == alpha.id
    # and the frames agree
    assert forge.costs(by="session").drop(columns="cost").equals(
        source.costs(by="session", session=alpha).drop(columns="cost"))
    assert forge.costs().cost[0] == pytest.approx(source.costs(session=alpha).cost[0])
    assert forge.history(alpha.id, include_superseded=True).drop(
        columns=["written_by"]).equals(
        source.history(alpha, include_superseded=True).drop(columns=["written_by"]))
    assert forge.compactions().drop(columns="boundary_pos").equals(
        source.compactions(alpha).drop(columns="boundary_pos"))


def test_a_forks_shared_messages_become_the_imported_sessions_own(run, fresh, tmp_path):
    fork = run.sessions["fork"]
    path = run.forge.export_session(fork, tmp_path / "fork.json")
    forge = fresh(other_kind(run))
    forge.import_session(path)
    assert snapshot(forge.store, fork.id, keep_session_id=False) == snapshot(
        run.forge.store, fork.id, keep_session_id=False)
    assert {m.session_id for m in forge.store.iter_timeline(fork.id)} == {fork.id}
    assert forge.history(fork.id).message_id.tolist() == run.forge.history(
        fork).message_id.tolist()


def test_an_import_never_overwrites_importing_twice_is_refused(run, fresh, tmp_path):
    path = run.forge.export_session("beta", tmp_path / "beta.json")
    forge = fresh(other_kind(run))
    first = forge.import_session(path)
    before = snapshot(forge.store, first.id)
    with pytest.raises(DuplicateId, match="never overwrites") as caught:
        forge.import_session(path)
    assert "new_ids=True" in str(caught.value)
    assert snapshot(forge.store, first.id) == before
    assert len(live_sessions(forge.store)) == 1
    assert len(all_events(forge.store, type="import")) == 1

    # a copy under fresh ids (and another name, the first one being taken)
    with pytest.raises(DuplicateId, match="name="):
        forge.import_session(path, new_ids=True)
    copy = forge.import_session(path, new_ids=True, name="beta-copy")
    assert copy.id != first.id and copy.name == "beta-copy"
    original, copied = snapshot(forge.store, first.id), snapshot(forge.store, copy.id)
    assert [m["role"] for m in copied] == [m["role"] for m in original]
    assert [[p["type"] for p in m["parts"]] for m in copied] == [
        [p["type"] for p in m["parts"]] for m in original]
    assert [m["id"] for m in copied] == sorted(m["id"] for m in copied)  # order kept
    assert not {m["id"] for m in copied} & {m["id"] for m in original}
    assert forge.history(copy).visible_to_model.tolist() == forge.history(
        first).visible_to_model.tolist()
    [compaction] = forge.compactions(copy).to_dict("records")
    assert compaction["request_message_id"] in {m["id"] for m in copied}


def test_a_truncated_file_is_a_clear_error_and_imports_nothing(run, fresh, tmp_path):
    whole = run.forge.export_session("alpha", tmp_path / "alpha.json").read_bytes()
    cut = tmp_path / "cut.json"
    cut.write_bytes(whole[: len(whole) * 2 // 3])
    forge = fresh(other_kind(run))
    with pytest.raises(ImportFailed, match="not complete JSON") as caught:
        forge.import_session(cut)
    assert "truncated" in str(caught.value) and "Nothing was imported" in str(caught.value)
    assert live_sessions(forge.store) == [] and forge.events().empty
    with pytest.raises(NotFound):
        forge.store.get_session(run.sessions["alpha"].id)


def test_an_inconsistent_or_foreign_file_imports_nothing(run, fresh, tmp_path):
    doc = json.loads(run.forge.export_session("alpha", tmp_path / "a.json").read_text())
    forge = fresh(other_kind(run))
    bad = [
        ([1, 2, 3], "not a forge-jupyter session export"),
        ({**doc, "version": 99}, "Upgrade forge-jupyter"),
        ({**doc, "messages": doc["messages"][:3] + [{"role": "robot"}]}, r"messages\[3\]"),
    ]
    wrong_part = json.loads(json.dumps(doc))
    wrong_part["messages"][1]["parts"][0]["message_id"] = doc["messages"][0]["id"]
    bad.append((wrong_part, r"messages\[1\].parts\[0\]"))
    twice = json.loads(json.dumps(doc))
    twice["messages"].append(twice["messages"][0])  # one message twice in the timeline
    bad.append((twice, "inconsistent session"))
    for i, (content, message) in enumerate(bad):
        path = tmp_path / f"bad{i}.json"
        path.write_text(json.dumps(content))
        with pytest.raises(ImportFailed, match=message):
            forge.import_session(path)
    assert live_sessions(forge.store) == [] and forge.events().empty


@pytest.mark.parametrize("kind", ["memory", "duckdb"])
def test_orphaned_tool_calls_are_closed_on_export(fresh, tmp_path, kind):
    forge = fresh(kind)
    session = forge.session("crashed")
    sid = session.id
    user = Message(session_id=sid, role="user", status="completed", completed_at=now())
    user.parts = [TextPart(session_id=sid, message_id=user.id, text="go", time_end=now())]
    dead = Message(session_id=sid, role="assistant", parent_id=user.id)  # still "running"
    dead.parts = [
        TextPart(session_id=sid, message_id=dead.id, text="half a sentence  ", time_start=now()),
        ToolPart(session_id=sid, message_id=dead.id, call_id="c1", tool="python",
                 state="running", input={"code": "1"}, time_start=now()),
    ]
    forge.store.write([PutMessage(user), *(PutPart(p) for p in user.parts),
                       AppendMessage(sid, user.id), PutMessage(dead),
                       *(PutPart(p) for p in dead.parts), AppendMessage(sid, dead.id)])

    path = forge.export_session(session, tmp_path / "crashed.json")
    doc = json.loads(path.read_text())
    last = doc["messages"][-1]
    assert last["status"] == "interrupted" and last["completed_at"] is not None
    text, tool = last["parts"]
    assert text["text"] == "half a sentence" and text["time_end"] is not None
    assert (tool["state"], tool["error"]) == ("error", UNFINISHED)
    assert set(doc["closed_on_export"]) == {p.id for p in dead.parts}

    target = fresh(kind)
    target.import_session(path)
    assert target.store.unfinished_messages(sid) == []
    assert target.tool_calls().state.tolist() == ["error"]


def test_exports_are_scrubbed_of_secrets(fresh, tmp_path, monkeypatch):
    secret = "sk-test-0123456789abcdefXYZ"
    monkeypatch.setenv("FORGE_TEST_API_KEY", secret)
    forge = fresh("duckdb")
    session = forge.session("leaky")
    sid = session.id
    user = Message(session_id=sid, role="user", status="completed", completed_at=now())
    user.parts = [TextPart(session_id=sid, message_id=user.id, text=f"my key is {secret}",
                           time_end=now())]
    answer = Message(session_id=sid, role="assistant", parent_id=user.id, status="completed",
                     finish="stop", completed_at=now())
    answer.parts = [ToolPart(session_id=sid, message_id=answer.id, call_id="c", tool="python",
                             state="completed", input={"code": f"print('{secret}')"},
                             output=f"{secret}\n", time_start=now(), time_end=now())]
    forge.store.write([PutMessage(user), *(PutPart(p) for p in user.parts),
                       AppendMessage(sid, user.id), PutMessage(answer),
                       *(PutPart(p) for p in answer.parts), AppendMessage(sid, answer.id)])
    text = forge.export_session(session, tmp_path / "leaky.json").read_text()
    assert secret not in text
    assert text.count("[secret:FORGE_TEST_API_KEY]") == 3


def test_a_failed_write_leaves_the_previous_file_whole(tmp_path):
    target = tmp_path / "out.json"
    target.write_text("the previous export")

    def fails(f):
        f.write(b"{\"half\": ")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        atomic_write(target, fails)
    assert target.read_text() == "the previous export"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_every_view_exports_to_parquet(run, tmp_path):
    for view in VIEW_NAMES:
        path = run.forge.export_parquet(view, tmp_path / f"{view}.parquet")
        table = pq.read_table(path)
        assert table.num_rows == run.forge.sql(f"SELECT count(*) AS n FROM {view}").n[0], view
        assert "tenant_id" not in table.column_names, view
        for field in table.schema:
            if hasattr(field.type, "tz") and field.type.tz:
                assert field.type.tz == "UTC", (view, field.name)
    costs = pq.read_table(tmp_path / "costs.parquet").to_pandas()
    assert costs.cost.sum() == pytest.approx(run.forge.costs(by="agent").cost.sum())
    assert not list(tmp_path.glob(".*tmp"))
    with pytest.raises(ValueError, match="no view named 'part'"):
        run.forge.export_parquet("part", tmp_path / "x.parquet")


def test_an_import_refused_halfway_leaves_no_session_behind(run, fresh, tmp_path):
    """The fork's timeline holds alpha's messages: with alpha already imported, writing them
    fails after the session row went in — and takes the session row with it."""
    alpha = run.forge.export_session("alpha", tmp_path / "alpha.json")
    fork = run.forge.export_session("alpha-fork", tmp_path / "fork.json")
    forge = fresh(other_kind(run))
    forge.import_session(alpha)
    with pytest.raises(DuplicateId, match="already belongs to another session"):
        forge.import_session(fork)
    with pytest.raises(NotFound):
        forge.store.get_session(run.sessions["fork"].id)
    assert [s.name for s in live_sessions(forge.store)] == ["alpha"]
    assert len(all_events(forge.store, type="import")) == 1
    forge.import_session(fork, new_ids=True)  # a copy goes in
    assert sorted(s.name for s in live_sessions(forge.store)) == ["alpha", "alpha-fork"]
