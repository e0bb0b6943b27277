"""filterCompacted equals a plain reading of the seed's rule, on random timelines (hypothesis)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from forge_jupyter.message import CompactionPart, ErrorInfo, Message, SessionInfo, TextPart, now
from forge_jupyter.session.view import filter_compacted, load_view
from forge_jupyter.store.inmemory.store import MemoryStore
from forge_jupyter.store.ops import AppendMessage, PutMessage, PutPart

SID = "ses_property"
OUTCOMES = {  # how a summary (or any assistant message) ended: status, finish, error
    "ok": ("completed", "stop", None),
    "error": ("error", None, ErrorInfo(type="APIError", message="boom")),
    "error-after-finish": ("error", "stop", ErrorInfo(type="APIError", message="late")),
    "aborted": ("aborted", "aborted", ErrorInfo(type="aborted", message="stopped")),
    "interrupted": ("interrupted", None, None),
    "no-finish": ("completed", None, None),
}


def reference(timeline: list[Message]) -> list[Message]:
    """The seed, read literally: the newest user message carrying a compaction part that a
    later successful summary answers is the boundary; the view starts there — or, when its
    compaction part names a tail_start, at that message if it lies at or before the boundary
    (else the scan never stops and the view is everything)."""
    def succeeded(m: Message) -> bool:
        return (m.role == "assistant" and m.summary and m.status == "completed"
                and bool(m.finish) and m.error is None)

    def compaction(m: Message):
        return next((p for p in m.parts if p.type == "compaction"), None)

    for b in range(len(timeline) - 1, -1, -1):
        m = timeline[b]
        if m.role == "user" and compaction(m) is not None and any(
                succeeded(x) and x.parent_id == m.id for x in timeline[b + 1:]):
            tail = compaction(m).tail_start
            if not tail:
                return timeline[b:]
            at = [i for i in range(b + 1) if timeline[i].id == tail]
            return timeline[at[0]:] if at else timeline
    return timeline


@st.composite
def timelines(draw) -> list[Message]:
    out: list[Message] = []
    for _ in range(draw(st.integers(0, 40))):
        kind = draw(st.sampled_from(["user", "user", "assistant", "compaction", "summary", "summary"]))
        users = [m for m in out if m.role == "user"]
        if kind == "user" or (kind in ("assistant", "summary") and not users):
            m = Message(session_id=SID, role="user", status="completed", completed_at=now())
            m.parts = [TextPart(session_id=SID, message_id=m.id, text="u", time_end=now())]
        elif kind == "compaction":
            m = Message(session_id=SID, role="user", status="completed", completed_at=now())
            choice = draw(st.sampled_from(["none", "earlier", "earlier", "self", "missing"]))
            tail = None
            if choice == "earlier" and out:
                tail = out[draw(st.integers(0, len(out) - 1))].id
            elif choice == "self":
                tail = m.id
            elif choice == "missing":
                tail = "msg_not_in_this_timeline"
            m.parts = [CompactionPart(session_id=SID, message_id=m.id, tail_start=tail)]
        else:
            outcome = draw(st.sampled_from(["ok", "ok", "ok", *sorted(OUTCOMES)]))
            status, finish, error = OUTCOMES[outcome]
            requests = [u for u in users if any(p.type == "compaction" for p in u.parts)]
            # mostly answering the latest compaction request, sometimes any user message
            pool = requests[-1:] if requests and draw(st.integers(0, 3)) else users
            parent = pool[draw(st.integers(0, len(pool) - 1))]
            m = Message(session_id=SID, role="assistant", parent_id=parent.id,
                        summary=kind == "summary", status=status, finish=finish, error=error,
                        completed_at=now())
            m.parts = [TextPart(session_id=SID, message_id=m.id, text="a", time_end=now())]
        out.append(m)
    return out


@settings(max_examples=400, deadline=None)
@given(timelines())
def test_filter_compacted_equals_the_reference(timeline):
    expected = [m.id for m in reference(timeline)]
    assert [m.id for m in filter_compacted(reversed(timeline))] == expected


@settings(max_examples=150, deadline=None)
@given(timelines(), st.integers(1, 7))
def test_load_view_reading_backwards_by_pages_equals_the_reference(timeline, page_size):
    store = MemoryStore()
    store.create_session(SessionInfo(id=SID))
    ops = []
    for m in timeline:
        ops += [PutMessage(m), *(PutPart(p) for p in m.parts), AppendMessage(SID, m.id)]
    if ops:
        store.write(ops)
    view, start = load_view(store, SID, page_size=page_size)
    expected = reference(timeline)
    assert [m.id for m in view] == [m.id for m in expected]
    assert start == len(timeline) - len(expected)
