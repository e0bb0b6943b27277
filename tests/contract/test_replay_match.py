"""Finding the recorded turn a cell may replay (session/replay_match.py) is the same SQL and
the same answer on every backend: same notebook, prompt and point of history, finished."""

from __future__ import annotations

from forge_jupyter.message import Message, TextPart, now
from forge_jupyter.session.replay_match import find_recording, point_of
from forge_jupyter.store.ops import AppendMessage, PutMessage, PutPart
from tests.contract.contract_helpers import new_session

NB = "/work/analysis.ipynb"


def _turn(store, session, prompt: str, cell: str, *, finish: str = "stop",
          notebook: str = NB) -> Message:
    user = Message(session_id=session.id, role="user", status="completed", completed_at=now(),
                   origin={"notebook": notebook, "cell_id": cell, "execution_count": 1})
    user.parts = [TextPart(session_id=session.id, message_id=user.id, text=prompt,
                           time_start=now(), time_end=now())]
    answer = Message(session_id=session.id, role="assistant", parent_id=user.id,
                     status="completed", finish=finish, completed_at=now(), model="m")
    answer.parts = [TextPart(session_id=session.id, message_id=answer.id, text="ok",
                             time_start=now(), time_end=now())]
    store.write([op for m in (user, answer) for op in (
        PutMessage(m), *(PutPart(p) for p in m.parts), AppendMessage(session.id, m.id))])
    return user


def test_the_match_is_the_same_notebook_prompt_and_point_on_every_backend(store, other_tenant):
    session = new_session(store)
    first = _turn(store, session, "Say hi.", "c1")
    second = _turn(store, session, "Say bye.", "c2")
    _turn(store, session, "Unfinished.", "c3", finish="tool-calls")

    def find(text: str, point: str | None, cell: str | None = None, notebook: str = NB):
        return find_recording(store, notebook=notebook, cell_id=cell, text=text, agent="build",
                              point=point)

    assert find("Say hi.", None).recording.user.id == first.id
    assert find("Say hi.", None, cell="c1").recording.user.id == first.id
    assert find("Say bye.", first.id).recording.user.id == second.id
    assert find("Say bye.", None).recording is None  # not at the start of a history
    assert "turns before it differ" in find("Say bye.", None).why_not
    assert find("Say hi.", None, cell="c9").recording is None  # another cell
    assert "prompt text differs" in find("Say hello.", None).why_not
    assert find("Say hi.", None, notebook="/work/other.ipynb").recording is None
    assert "did not finish" in find("Unfinished.", second.id).why_not
    assert point_of(store, session.id) != second.id  # the unfinished turn is the last one
    # another tenant's store finds nothing of this one
    assert find_recording(other_tenant, notebook=NB, cell_id=None, text="Say hi.",
                          agent="build", point=None).recording is None
