"""What the context-governance tests share: what the model was shown, distinct text, and a
hand-made timeline."""

from __future__ import annotations

import json

from forge_jupyter.message import CompactionPart, Message, TextPart, ToolPart, now
from forge_jupyter.store.ops import AppendMessage, PutMessage, PutPart


def words(tag: str, n: int = 20) -> str:
    """``n`` distinct words carrying ``tag`` (litellm refuses a stream repeating one chunk)."""
    return " ".join(f"{tag}-{i}" for i in range(n))


def shown(request) -> str:
    """Everything one request showed the model, as one string (system, messages, tool calls)."""
    return json.dumps(request.body.get("messages"))


def contents(request) -> list[tuple[str, str]]:
    """(role, content) of each message the model was sent, system prompt left out."""
    return [(m["role"], m.get("content") or "") for m in request.messages if m["role"] != "system"]


def assert_calls_answered(request) -> None:
    """Every tool call the model was sent is followed by its result, before the next turn."""
    msgs = request.messages
    for i, m in enumerate(msgs):
        for call in m.get("tool_calls") or ():
            results = []
            for later in msgs[i + 1:]:
                if later["role"] != "tool":
                    break
                results.append(later["tool_call_id"])
            assert call["id"] in results, f"call {call['id']} sent without its result"
    ids = {c["id"] for m in msgs for c in m.get("tool_calls") or ()}
    for m in msgs:
        if m["role"] == "tool":
            assert m["tool_call_id"] in ids, f"result {m['tool_call_id']} sent without its call"


class TimelineWriter:
    """Rows written straight through ``store.write`` (a crashed runner, a hand-made history)."""

    def __init__(self, store, session_id: str) -> None:
        self.store, self.sid = store, session_id

    def _put(self, m: Message) -> Message:
        self.store.write([PutMessage(m), *(PutPart(p) for p in m.parts),
                          AppendMessage(self.sid, m.id)])
        return m

    def user(self, text: str, **kw) -> Message:
        m = Message(session_id=self.sid, role="user", status="completed", completed_at=now(), **kw)
        m.parts = [TextPart(session_id=self.sid, message_id=m.id, text=text, time_end=now())]
        return self._put(m)

    def compaction(self, tail_start: str | None = None) -> Message:
        m = Message(session_id=self.sid, role="user", status="completed", completed_at=now())
        m.parts = [CompactionPart(session_id=self.sid, message_id=m.id, auto=False,
                                  reason="test", tail_start=tail_start)]
        return self._put(m)

    def assistant(self, parent: Message, text: str = "", *, status: str = "completed",
                  summary: bool = False, tools: list[ToolPart] | None = None, **kw) -> Message:
        terminal = status != "running"
        m = Message(session_id=self.sid, role="assistant", parent_id=parent.id, status=status,
                    summary=summary, finish=kw.pop("finish", "stop" if terminal else None),
                    completed_at=now() if terminal else None, **kw)
        if text:
            m.parts.append(TextPart(session_id=self.sid, message_id=m.id, text=text,
                                    time_end=now() if terminal else None))
        for t in tools or ():
            m.parts.append(t.model_copy(update={"session_id": self.sid, "message_id": m.id}))
        return self._put(m)


def say(text: str, **kw):
    """A text turn streamed in large pieces (fewer chunks: a faster test, the same path)."""
    from forge_jupyter.testing import Turn

    return Turn.text(text, chunk=256, **kw)
