"""What the fake model server answers: the demo model's Turn plus the faults a test scripts.

Text, reasoning and tool calls are the demo model's vocabulary (``forge_jupyter.demo.turn``);
here a Turn may also pause (`delay`), drop the connection (`drop`), answer with an HTTP error
(`http_error`) or replay a recorded stream byte for byte (`Turn.replay`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING

from forge_jupyter.demo import turn as _demo
from forge_jupyter.demo.turn import (
    DEFAULT_CHUNK,
    FinishReason,
    Protocol,
    Reasoning,
    Text,
    ToolCall,
    Usage,
    UsageSpec,
    reasoning,
    split,
    text,
    tool_call,
)
from forge_jupyter.testing.sse import detect_protocol

if TYPE_CHECKING:
    from forge_jupyter.testing.server import RecordedRequest

__all__ = [
    "DEFAULT_CHUNK", "Delay", "Drop", "Event", "FinishReason", "HttpError", "Reasoning",
    "Responder", "ScriptItem", "Text", "ToolCall", "Turn", "Usage", "UsageSpec", "as_turn",
    "delay", "drop", "http_error", "reasoning", "split", "text", "tool_call",
]


@dataclass(frozen=True)
class Delay:
    seconds: float


@dataclass(frozen=True)
class HttpError:
    status: int
    message: str
    retry_after: float | None = None
    error_type: str | None = None  # provider error type; derived from the status when None


@dataclass(frozen=True)
class Drop:
    """Close the connection abruptly here: no terminating chunk, no [DONE]."""


Event = Text | Reasoning | ToolCall | Delay | HttpError | Drop


def delay(seconds: float) -> Delay:
    """Sleep `seconds` before the next event (before the response headers if it comes first)."""
    return Delay(seconds)


def http_error(
    status: int,
    message: str = "fake model server: scripted error",
    retry_after: float | None = None,
    error_type: str | None = None,
) -> HttpError:
    """Answer the whole request with this HTTP error and a provider-shaped JSON body."""
    return HttpError(status, message, retry_after, error_type)


def drop() -> Drop:
    """Close the connection at this point of the stream, as a crashed server would."""
    return Drop()


@dataclass(frozen=True)
class Turn(_demo.Turn):
    """The server's answer to one request (see ``forge_jupyter.demo.turn.Turn``), which may
    also hold delay(), drop() and http_error() events, or be a replay of a recorded stream."""

    # set by Turn.replay(): the recorded body, its protocol and file name
    replay_bytes: bytes | None = None
    replay_protocol: Protocol | None = None
    replay_name: str | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        evs = self.events
        errors = [e for e in evs if isinstance(e, HttpError)]
        if errors and not all(isinstance(e, Delay) for e in evs[: evs.index(errors[0])]):
            raise ValueError("http_error() answers the whole request: only delay() may precede it")

    @classmethod
    def error(
        cls, status: int, message: str | None = None, retry_after: float | None = None
    ) -> Turn:
        msg = message or f"fake model server: scripted HTTP {status}"
        return cls([http_error(status, msg, retry_after)])

    @classmethod
    def replay(cls, path: str | PathLike[str], chunk_delay: float = 0.0) -> Turn:
        """Stream a recorded .sse file byte for byte, one SSE event per write, whatever was asked."""
        raw = Path(path).read_bytes()
        return cls(
            chunk_delay=chunk_delay,
            replay_bytes=raw,
            replay_protocol=detect_protocol(raw),
            replay_name=Path(path).name,
        )

    @property
    def error_event(self) -> HttpError | None:
        return next((e for e in self.events if isinstance(e, HttpError)), None)


# A script entry may also be a function of the request (demo mode is one).
Responder = Callable[["RecordedRequest"], _demo.Turn]
ScriptItem = _demo.Turn | Event | str | Responder


def as_turn(item: ScriptItem | list[Event], request: RecordedRequest) -> _demo.Turn:
    """Normalize a script entry: a Turn, one event, a list of events, a str (text), or a responder."""
    if isinstance(item, _demo.Turn):
        return item
    if isinstance(item, str):
        return Turn.text(item)
    if isinstance(item, Event | list | tuple):
        return Turn(item)  # type: ignore[arg-type]
    if callable(item):
        return as_turn(item(request), request)
    raise TypeError(f"cannot use {item!r} as a Turn")
