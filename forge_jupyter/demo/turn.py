"""What a model server answers: a Turn per request, built from text, reasoning and tool calls.

A Turn is protocol-neutral; `wire.py` renders it as an OpenAI chunk stream or an Anthropic
messages stream depending on the route the request came in on. The demo model answers with
these; a server built on `server.py` may add events of its own that it acts on while writing
(``forge_jupyter.testing`` adds pauses, dropped connections and HTTP errors).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Self

if TYPE_CHECKING:
    from .server import RecordedRequest

DEFAULT_CHUNK = 4  # characters per streamed piece when `chunk=` is not given

FinishReason = Literal["stop", "tool_calls", "length", "content_filter"]
Protocol = Literal["openai", "anthropic"]  # the two wire formats a server speaks


def split(s: str, size: int) -> list[str]:
    """`s` in pieces of `size` characters (at least one piece, possibly empty)."""
    size = max(1, size)
    return [s[i : i + size] for i in range(0, len(s), size)] or [""]


@dataclass(frozen=True)
class Text:
    text: str
    chunk: int = DEFAULT_CHUNK

    def pieces(self) -> list[str]:
        return split(self.text, self.chunk)


@dataclass(frozen=True)
class Reasoning:
    text: str
    chunk: int = DEFAULT_CHUNK
    signature: str | None = None  # Anthropic thinking signature; a fixed fake one when None

    def pieces(self) -> list[str]:
        return split(self.text, self.chunk)


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: str  # the exact string put on the wire (may be malformed JSON on purpose)
    id: str | None = None
    fragments: int = 3

    def pieces(self) -> list[str]:
        """The arguments cut into `fragments` roughly equal pieces (fewer if the string is short)."""
        if not self.arguments:
            return []
        size = -(-len(self.arguments) // max(1, self.fragments))
        return split(self.arguments, size)


Event = Text | Reasoning | ToolCall  # what a model says; `wire.py` renders each


def text(s: str, chunk: int = DEFAULT_CHUNK) -> Text:
    """Assistant text, streamed in pieces of `chunk` characters (default 4)."""
    return Text(s, chunk)


def reasoning(s: str, chunk: int = DEFAULT_CHUNK, signature: str | None = None) -> Reasoning:
    """Reasoning: OpenAI `delta.reasoning_content`; Anthropic a thinking block + signature_delta."""
    return Reasoning(s, chunk, signature)


def tool_call(
    name: str,
    arguments: Mapping[str, Any] | str | None = None,
    id: str | None = None,
    fragments: int = 3,
) -> ToolCall:
    """A tool call. A dict is sent as json.dumps(arguments); a str is sent verbatim (malformed JSON
    included). `fragments`: how many pieces the arguments string is cut into, after the opening
    fragment that carries id and name. The id is `call_…`/`toolu_…` generated per request when None."""
    args = arguments if isinstance(arguments, str) else json.dumps(dict(arguments or {}))
    return ToolCall(name, args, id, fragments)


@dataclass(frozen=True)
class Usage:
    """Token counts in OpenAI's convention: `prompt` includes cache reads/writes, `completion`
    includes reasoning. The Anthropic rendering subtracts the cache parts from input_tokens."""

    prompt: int
    completion: int
    reasoning: int = 0
    cache_read: int = 0
    cache_write: int = 0

    _ALIASES: ClassVar[dict[str, tuple[str, ...]]] = {
        "prompt": ("prompt", "prompt_tokens", "input", "input_tokens"),
        "completion": ("completion", "completion_tokens", "output", "output_tokens"),
        "reasoning": ("reasoning", "reasoning_tokens"),
        "cache_read": ("cache_read", "cached_tokens", "cache_read_input_tokens"),
        "cache_write": ("cache_write", "cache_creation_input_tokens"),
    }

    @classmethod
    def coerce(cls, value: Usage | tuple[int, int] | list[int] | Mapping[str, int]) -> Usage:
        """``value`` as Usage: a (prompt, completion, …) sequence or a dict of either's names."""
        if isinstance(value, Usage):
            return value
        if isinstance(value, tuple | list):
            return cls(*value)
        unknown = set(value) - {a for names in cls._ALIASES.values() for a in names}
        if unknown:
            raise ValueError(f"unknown usage keys {sorted(unknown)}; use {list(cls._ALIASES)}")
        found = {
            key: next(int(value[a]) for a in names if a in value)
            for key, names in cls._ALIASES.items()
            if any(a in value for a in names)
        }
        return cls(**{"prompt": 0, "completion": 0, **found})


UsageSpec = Usage | tuple[int, int] | Mapping[str, int] | Literal["default"] | None


@dataclass(frozen=True)
class Turn:
    """The server's answer to one request.

    events: a list of events (or one event).
    finish: None → "tool_calls" if the turn calls tools, else "stop" (OpenAI vocabulary; rendered
    as tool_use / end_turn / max_tokens / refusal on the Anthropic route).
    usage: "default" → estimated counts (prompt: len(json of system, messages and tools) // 4;
    completion: characters of text + reasoning + tool names and arguments // 4; reasoning: reasoning
    characters // 4; each at least 1). A (prompt, completion) tuple, a dict (see Usage), or None for
    no usage on the wire at all.
    chunk_delay: seconds slept between every two SSE events (a slow stream).
    model: the model name in the response; the request's model when None.
    """

    events: tuple[object, ...] = ()  # `Event`s, and any a server acts on itself (see above)
    finish: str | None = None
    usage: UsageSpec = "default"
    chunk_delay: float = 0.0
    model: str | None = None

    def __post_init__(self) -> None:
        evs = tuple(self.events) if isinstance(self.events, list | tuple) else (self.events,)
        object.__setattr__(self, "events", evs)
        if self.usage not in ("default", None):
            object.__setattr__(self, "usage", Usage.coerce(self.usage))  # type: ignore[arg-type]

    # -- shortcuts ---------------------------------------------------------------------------
    @classmethod
    def text(cls, s: str, chunk: int = DEFAULT_CHUNK, **kwargs: Any) -> Self:
        """A turn that only says ``s``."""
        return cls([text(s, chunk)], **kwargs)

    @classmethod
    def tool(
        cls, name: str, arguments: Mapping[str, Any] | str | None = None, **kwargs: Any
    ) -> Self:
        """A turn that only calls the tool ``name``."""
        return cls([tool_call(name, arguments)], **kwargs)

    # -- derived -----------------------------------------------------------------------------
    @property
    def tool_calls(self) -> list[ToolCall]:
        """The tool calls, in order."""
        return [e for e in self.events if isinstance(e, ToolCall)]

    @property
    def finish_reason(self) -> str:
        """The finish reason sent, in OpenAI's vocabulary."""
        return self.finish or ("tool_calls" if self.tool_calls else "stop")

    def usage_for(self, request: RecordedRequest) -> Usage | None:
        """The token counts sent for ``request``: the given ones, estimated ones, or None."""
        if self.usage is None or isinstance(self.usage, Usage):
            return self.usage
        body = request.body
        prompt_chars = len(
            json.dumps([body.get("system"), body.get("messages"), body.get("tools")])
        )
        out = self.events
        reasoning_chars = sum(len(e.text) for e in out if isinstance(e, Reasoning))
        completion_chars = reasoning_chars + sum(
            len(e.text) if isinstance(e, Text) else len(e.name) + len(e.arguments)
            for e in out
            if isinstance(e, Text | ToolCall)
        )
        return Usage(
            prompt=max(1, prompt_chars // 4),
            completion=max(1, completion_chars // 4),
            reasoning=reasoning_chars // 4,
        )

