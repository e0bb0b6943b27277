"""The in-process bus: typed events for the widget, the side panel and tests.

The write entry publishes a sync event for every full-row update (``MessageUpdated``,
``PartUpdated``) and a ``PartDelta`` for every streamed fragment; deltas live only here and
are never stored. Dispatch is synchronous and cheap: the stream path publishes one event per
chunk, so a publish with no subscribers must cost next to nothing. A subscriber that raises is
logged and skipped — a broken widget never stops a run.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .message import Event, Message, Part, SessionInfo

log = logging.getLogger(__name__)


@dataclass(slots=True, frozen=True)
class MessageUpdated:
    message: Message

    @property
    def session_id(self) -> str:
        return self.message.session_id


@dataclass(slots=True, frozen=True)
class PartUpdated:
    part: Part

    @property
    def session_id(self) -> str:
        return self.part.session_id


@dataclass(slots=True, frozen=True)
class PartDelta:
    session_id: str
    message_id: str
    part_id: str
    field: str  # "text" for text and reasoning parts
    delta: str


@dataclass(slots=True, frozen=True)
class SessionStatus:
    session_id: str
    status: str  # busy, idle, retry, compacting
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True, frozen=True)
class SessionUpdated:
    info: SessionInfo

    @property
    def session_id(self) -> str:
        return self.info.id


@dataclass(slots=True, frozen=True)
class EventRecorded:
    event: Event

    @property
    def session_id(self) -> str | None:
        return self.event.session_id


@dataclass(slots=True, frozen=True)
class ToolOutput:
    """Live output of a running tool (what `python` code prints), shown to the person."""

    session_id: str
    part_id: str
    stream: str  # stdout | stderr
    text: str


@dataclass(slots=True, frozen=True)
class DisplayData:
    """A rich output a tool produced (a plot, an image) for the person to see."""

    session_id: str
    part_id: str
    data: dict[str, Any]  # a MIME bundle: {"image/png": base64, "text/plain": …}


@dataclass(slots=True, frozen=True)
class ApprovalRequested:
    session_id: str
    request_id: str
    part_id: str
    tool: str
    input: dict[str, Any]
    rule: str  # the permission rule that asked, for the person to read


@dataclass(slots=True, frozen=True)
class ApprovalAnswered:
    session_id: str
    request_id: str
    answer: str  # once | session | deny
    reason: str | None = None


@dataclass(slots=True, frozen=True)
class QuestionAsked:
    """The ``question`` tool asks the person (session/question.py): shown like an approval."""

    session_id: str
    request_id: str
    part_id: str
    question: str
    options: tuple[str, ...] = ()


@dataclass(slots=True, frozen=True)
class QuestionAnswered:
    """The question is over: answered (``text``), or not (``text`` None, ``reason`` says why)."""

    session_id: str
    request_id: str
    text: str | None
    by: str = "user"
    reason: str | None = None


BusEvent = (
    MessageUpdated
    | PartUpdated
    | PartDelta
    | SessionStatus
    | SessionUpdated
    | EventRecorded
    | ToolOutput
    | DisplayData
    | ApprovalRequested
    | ApprovalAnswered
    | QuestionAsked
    | QuestionAnswered
)
Subscriber = Callable[[Any], None]


@dataclass(slots=True, frozen=True)
class _Subscription:
    callback: Subscriber
    session_id: str | None
    types: tuple[type, ...] | None


class Bus:
    """Publish/subscribe with optional filters by session and event type."""

    def __init__(self) -> None:
        self._subs: tuple[_Subscription, ...] = ()  # replaced, never mutated: safe to iterate
        self._lock = threading.Lock()
        # type → whether a subscriber takes it, forgotten at every (un)subscribe: the stream
        # path asks once a chunk, and a subscriber of full rows only (tracing) wants no deltas
        self._wanted: dict[type, bool] = {}

    def subscribe(
        self,
        callback: Subscriber,
        *,
        session_id: str | None = None,
        types: tuple[type, ...] | type | None = None,
    ) -> Callable[[], None]:
        """Call ``callback(event)`` for matching events; returns the unsubscribe function."""
        if isinstance(types, type):
            types = (types,)
        sub = _Subscription(callback, session_id, types)
        with self._lock:
            self._subs = (*self._subs, sub)
            self._wanted = {}

        def unsubscribe() -> None:
            with self._lock:
                self._subs = tuple(s for s in self._subs if s is not sub)
                self._wanted = {}

        return unsubscribe

    @property
    def has_subscribers(self) -> bool:
        return bool(self._subs)

    def wants(self, kind: type) -> bool:
        """Whether some subscriber takes events of ``kind`` (so building one is worth it)."""
        table = self._wanted  # read before the subscribers: a stale answer lands in a dropped table
        wanted = table.get(kind)
        if wanted is None:
            wanted = table[kind] = any(
                s.types is None or issubclass(kind, s.types) for s in self._subs)
        return wanted

    def publish(self, event: Any) -> None:
        subs = self._subs
        if not subs:
            return
        for sub in subs:
            if sub.types is not None and not isinstance(event, sub.types):
                continue
            if sub.session_id is not None and getattr(event, "session_id", None) != sub.session_id:
                continue
            try:
                sub.callback(event)
            except Exception:  # a subscriber's bug must not stop the run that published
                log.exception("bus subscriber %r failed on %s", sub.callback, type(event).__name__)
