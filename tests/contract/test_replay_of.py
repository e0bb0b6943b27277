"""``replay_of`` (schema step 6): a replayed message names the recorded one it repeats, on
every backend, through every read path — and a live message names none."""

from __future__ import annotations

from forge_jupyter.message import Message, now
from forge_jupyter.store.ops import AppendMessage, PutMessage
from tests.contract.contract_helpers import new_session


def test_replay_of_reads_back_on_every_path(store):
    session = new_session(store)
    live = Message(session_id=session.id, role="user", status="completed", completed_at=now())
    replayed = Message(session_id=session.id, role="user", status="completed",
                       completed_at=now(), replay_of=live.id)
    store.write([PutMessage(live), AppendMessage(session.id, live.id),
                 PutMessage(replayed), AppendMessage(session.id, replayed.id)])
    assert store.get_message(replayed.id).replay_of == live.id
    assert store.get_message(live.id, with_parts=False).replay_of is None
    assert [m.replay_of for m in store.read_timeline(session.id)] == [None, live.id]
    assert [m.replay_of for m in store.timeline(session.id, with_parts=False).items] == [None, live.id]
