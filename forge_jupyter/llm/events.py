"""The stream events one model round yields (DESIGN §4): what the Processor consumes.

Text and reasoning come as start · delta… · end; a tool call is announced when its name
arrives (``ToolInputStart``, so its card can show) and emitted whole when its arguments are
complete (``ToolCall``); ``StepFinish`` ends the round with usage, cost and finish reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..message import Tokens


@dataclass(slots=True)
class TextStart:
    pass


@dataclass(slots=True)
class TextDelta:
    text: str


@dataclass(slots=True)
class TextEnd:
    pass


@dataclass(slots=True)
class ReasoningStart:
    pass


@dataclass(slots=True)
class ReasoningDelta:
    text: str


@dataclass(slots=True)
class ReasoningEnd:
    signature: str | None = None


@dataclass(slots=True)
class ToolInputStart:
    """A tool call began streaming: its card can show while the arguments arrive."""

    index: int
    call_id: str
    name: str


@dataclass(slots=True)
class ToolCall:
    """A tool call whose arguments are complete (``arguments`` is the raw string)."""

    index: int
    call_id: str
    name: str
    arguments: str


@dataclass(slots=True)
class ServerToolCall:
    """A tool the provider runs itself (its web search): the call, never run here."""

    call_id: str
    name: str
    arguments: str


@dataclass(slots=True)
class ServerToolResult:
    """What the provider's own tool found: its result block as the wire had it."""

    call_id: str
    block: dict[str, Any]


@dataclass(slots=True)
class Citation:
    """A source the text cites (Anthropic's citation, OpenAI's url_citation annotation)."""

    data: dict[str, Any]


@dataclass(slots=True)
class StepFinish:
    finish_reason: str | None
    tokens: Tokens
    cost: float | None
    model: str
    cut: bool = False  # stopped here at ``LLMRequest.output_cap``, not ended by the server


StreamEvent = (
    TextStart | TextDelta | TextEnd | ReasoningStart | ReasoningDelta | ReasoningEnd
    | ToolInputStart | ToolCall | StepFinish | ServerToolCall | ServerToolResult | Citation
)
