"""Small builders for contract tests: sessions, finished turns, one sample of every part."""

from __future__ import annotations

from typing import Any

from forge_jupyter.message import (
    AgentPart,
    CompactionPart,
    ErrorInfo,
    FilePart,
    Message,
    Part,
    PatchFile,
    PatchPart,
    ReasoningPart,
    RetryPart,
    SessionInfo,
    StepFinishPart,
    StepStartPart,
    SubtaskPart,
    TextPart,
    Tokens,
    ToolPart,
    now,
)
from forge_jupyter.store.base import Store
from forge_jupyter.store.ops import AppendMessage, PutMessage, PutPart

# SQL backends keep timestamps to the microsecond (TIMESTAMPTZ)
_TIMESTAMPS = {"created_at", "updated_at", "completed_at", "time_start", "time_end"}


def comparable(value: Any) -> Any:
    """A model's JSON form with timestamps rounded to the microsecond."""
    if hasattr(value, "model_dump"):
        value = {**value.model_dump(mode="json"), **(
            {"parts": [comparable(p) for p in value.parts]} if isinstance(value, Message) else {}
        )}
    if isinstance(value, dict):
        return {
            k: (round(v, 6) if k in _TIMESTAMPS and isinstance(v, float) else comparable(v))
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [comparable(v) for v in value]
    return value


def assert_same(stored: Any, written: Any) -> None:
    assert comparable(stored) == comparable(written)


def new_session(store: Store, name: str | None = None, **fields: Any) -> SessionInfo:
    return store.create_session(SessionInfo(name=name, **fields))


def user_turn(store: Store, session: SessionInfo, text: str = "hello") -> Message:
    """A finished user message with one text part, appended to the timeline."""
    message = Message(session_id=session.id, role="user", status="completed", completed_at=now())
    part = TextPart(session_id=session.id, message_id=message.id, text=text, time_end=now())
    store.write([PutMessage(message), PutPart(part), AppendMessage(session.id, message.id)])
    return message.model_copy(update={"parts": [part]})


def running_assistant(store: Store, session: SessionInfo, parent: Message | None = None) -> Message:
    """An assistant skeleton, appended and still running."""
    message = Message(
        session_id=session.id, role="assistant", parent_id=parent.id if parent else None,
        model="openai/gpt-4o-mini", provider="openai",
    )
    store.write([PutMessage(message), AppendMessage(session.id, message.id)])
    return message


def finish(store: Store, message: Message, status: str = "completed") -> Message:
    done = message.model_copy(update={"status": status, "completed_at": now(), "parts": []})
    store.write([PutMessage(done)])
    return done


def text(message: Message, body: str = "text", *, done: bool = True) -> TextPart:
    t = now()
    return TextPart(session_id=message.session_id, message_id=message.id, text=body,
                    time_start=t, time_end=t if done else None)


def tool(message: Message, state: str = "running") -> ToolPart:
    return ToolPart(session_id=message.session_id, message_id=message.id, call_id="call_1",
                    tool="python", state=state, input={"code": "1 + 1"}, time_start=now())


def every_part(message: Message) -> list[Part]:
    """One part of every type, with its optional fields filled in."""
    s, m, t = message.session_id, message.id, now()
    common: dict[str, Any] = {"session_id": s, "message_id": m, "metadata": {"k": [1, "ü"]}}
    return [
        TextPart(**common, text="héllo ☃  \n", synthetic=True, time_start=t, time_end=t + 1),
        ReasoningPart(**common, text="thinking…", time_start=t, time_end=t + 0.5),
        ToolPart(**common, call_id="call_9", tool="python", state="error",
                 input={"code": "1/0", "n": [1, 2.5, None]}, raw_input='{"code": "1/0"',
                 output="partial", error="ZeroDivisionError", title="divide",
                 time_start=t, time_end=t + 2),
        FilePart(**common, path="data/x.csv", url="file:///x.csv", mime="text/csv",
                 filename="x.csv"),
        AgentPart(**common, name="plan"),
        CompactionPart(**common, auto=False, reason="manual", tail_start="msg_tail"),
        SubtaskPart(**common, agent="explore", prompt="look", description="d",
                    child_session_id="ses_child"),
        StepStartPart(**common, model="openai/gpt-4o-mini"),
        StepFinishPart(**common, reason="tool-calls", cost=None, model="m",
                       tokens=Tokens(input=10, output=5, reasoning=2, cache_read=3,
                                     cache_write=1, estimated=True)),
        PatchPart(**common, files=[PatchFile(path="a.py", diff="@@ -1 +1 @@\n-a\n+b\n",
                                             additions=1, deletions=1)]),
        RetryPart(**common, attempt=2, error="429 rate limited", wait=1.5),
    ]


def full_message(session: SessionInfo) -> Message:
    """A finished assistant message with every field of the row set."""
    return Message(
        session_id=session.id, role="assistant", parent_id="msg_parent", agent="plan",
        model="anthropic/claude", provider="anthropic", status="error", finish="length",
        summary=True, error=ErrorInfo(type="BadRequestError", message="too long"),
        tokens=Tokens(input=100, output=20, reasoning=5, cache_read=7, cache_write=3,
                      estimated=True),
        cost=None, completed_at=now(), origin={"notebook": "a.ipynb", "cell": 3},
        metadata={"x": {"y": [1, 2]}}, replay_of="msg_recorded",
    )
