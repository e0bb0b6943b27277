"""A replayed turn's marks (``metadata["replay"]``) are typed on the Python side —
``Message.replay`` and ``ToolPart.replayed`` — and stored as they always were: rows written
before read back the same, and what is written now is the same JSON."""

from __future__ import annotations

from forge_jupyter.message import Message, SessionInfo, ToolPart
from forge_jupyter.metadata_facts import ReplayDivergence, ReplayedCall, ReplayMark
from forge_jupyter.render.replay_mark import message_replay_line, replay_line
from forge_jupyter.store.duckdb.store import DuckDBStore
from forge_jupyter.store.ops import AppendMessage, PutMessage, PutPart

OLD_MARK = {"original": "msg_0001", "recorded_at": 1796068860.0, "model": "openai/gpt-4o-mini",
            "session_id": "ses_0001", "cell_id": None, "cell": "cell “go”",
            "diverged": {"part_id": "prt_0002", "tool": "python", "index": 2,
                         "difference": "the output differs"}}
OLD_CALL = {"of": "prt_0001", "re_executed": False, "why": "its recorded result"}


def test_replay_marks_stored_the_old_way_read_back_typed_and_unchanged(tmp_path):
    store = DuckDBStore(tmp_path / "old.duckdb")
    session = store.create_session(SessionInfo())
    m = Message(session_id=session.id, role="assistant", status="completed",
                replay_of="msg_0003", metadata={"replay": OLD_MARK})
    part = ToolPart(session_id=session.id, message_id=m.id, call_id="c", tool="sql",
                    state="completed", output="1", time_start=1.0, time_end=1.0,
                    metadata={"replay": OLD_CALL})
    store.write([PutMessage(m), PutPart(part), AppendMessage(session.id, m.id)])
    store.close()
    again = DuckDBStore(tmp_path / "old.duckdb")
    (read,) = again.timeline(session.id, limit=5).items
    again.close()
    assert read.replay == ReplayMark(**{**OLD_MARK, "diverged": ReplayDivergence(
        **OLD_MARK["diverged"])})
    assert read.replay.diverged is not None and read.replay.diverged.index == 2
    assert read.replay.stored() == OLD_MARK  # written back, the same JSON
    (call,) = read.tool_parts
    assert call.replayed == ReplayedCall(**OLD_CALL) and call.replayed.stored() == OLD_CALL
    assert replay_line([read]) == ("↻ Replayed — recorded 2026-11-30 20:01 UTC with "
                                   "openai/gpt-4o-mini · no model call · $0 · stopped at "
                                   "python call 2: the output differs")
    assert message_replay_line(read) == (
        "↻ replayed · recorded 2026-11-30 20:01 UTC with openai/gpt-4o-mini")


def test_a_live_message_has_no_mark_and_an_unreadable_one_breaks_no_read():
    live = Message(session_id="s", role="assistant")
    assert live.replay is None
    odd = Message(session_id="s", role="assistant", replay_of="m",
                  metadata={"replay": {"recorded_at": "yesterday", "later_key": 1}})
    assert odd.replay == ReplayMark()
    assert message_replay_line(odd) == "↻ replayed · recorded"
    kept = Message(session_id="s", role="assistant", metadata={"replay": {"later_key": 1}})
    assert kept.replay is not None and kept.replay.stored() == {"later_key": 1}
