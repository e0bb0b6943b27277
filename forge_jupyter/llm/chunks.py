"""litellm chunks → stream events, one ``ChunkNormalizer`` per model round.

Streamed tool calls are assembled here by ``index`` — not with litellm's
``stream_chunk_builder`` — because providers send continuation fragments with ``id: ""`` or
``name: ""`` (Qwen, Mistral) and some send no id at all.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any, Literal

from ..scrub import valid_text
from .events import (
    Citation,
    ReasoningDelta,
    ReasoningEnd,
    ReasoningStart,
    StreamEvent,
    TextDelta,
    TextEnd,
    TextStart,
    ToolCall,
    ToolInputStart,
)
from .web_search import ServerTools

Block = Literal["text", "reasoning"]

# Providers' finish reasons in the seeds' words (tool-calls, length, content-filter, stop).
FINISH_NAMES = {"tool_calls": "tool-calls", "function_call": "tool-calls",
                "content_filter": "content-filter", "end_turn": "stop", "tool_use": "tool-calls",
                "max_tokens": "length"}


def finish_name(reason: str | None) -> str | None:
    return None if reason is None else FINISH_NAMES.get(reason, reason)


@dataclass(slots=True)
class _ToolAcc:
    index: int
    call_id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    announced: bool = False


class ChunkNormalizer:
    """Turns litellm chunks into stream events; one instance per model round.

    Per-chunk work is a few attribute reads: litellm itself costs ~0.3 ms a chunk here, and the
    harness must stay small beside it.
    """

    def __init__(self) -> None:
        self.mode: Block | None = None
        self.tools: dict[int, _ToolAcc] = {}
        self.finish_reason: str | None = None
        self.usage: Any = None
        self.signature: str | None = None
        # What the model wrote, for a local token count when the wire has no usage.
        self.text_out: list[str] = []
        self.reasoning_out: list[str] = []
        self.received_content = False
        self.server = ServerTools()
        # Characters the model wrote (text, reasoning, tool arguments): what a local stop of
        # the step reads (``LLMRequest.output_cap``). One add per piece, nothing allocated.
        self.out_chars = 0

    def _switch(self, mode: Block | None, out: list[StreamEvent]) -> None:
        if self.mode == mode:
            return
        if self.mode == "text":
            out.append(TextEnd())
        elif self.mode == "reasoning":
            out.append(ReasoningEnd(self.signature))
            self.signature = None
        if mode == "text":
            out.append(TextStart())
        elif mode == "reasoning":
            out.append(ReasoningStart())
        self.mode = mode

    def feed(self, chunk: Any) -> list[StreamEvent]:
        """The events one chunk (a litellm ``ModelResponseStream``) carries, in order."""
        out: list[StreamEvent] = []
        usage = getattr(chunk, "usage", None)
        if usage is not None:
            self.usage = usage
        choices = chunk.choices
        if not choices:
            return out  # usage-only chunk, or an Azure prompt-filter chunk
        choice = choices[0]
        delta = choice.delta
        if delta is not None:
            reasoning = getattr(delta, "reasoning_content", None)
            if reasoning:
                reasoning = valid_text(reasoning)  # a "\ud800" on the wire is a lone surrogate
                self._switch("reasoning", out)
                out.append(ReasoningDelta(reasoning))
                self.reasoning_out.append(reasoning)
                self.out_chars += len(reasoning)
                self.received_content = True
            blocks = getattr(delta, "thinking_blocks", None)
            if blocks:
                for block in blocks:
                    sig = block.get("signature") if isinstance(block, dict) else None
                    if sig:
                        self.signature = sig
            content = delta.content
            if content:
                content = valid_text(content)
                self._switch("text", out)
                out.append(TextDelta(content))
                self.text_out.append(content)
                self.out_chars += len(content)
                self.received_content = True
            if getattr(delta, "provider_specific_fields", None) or getattr(delta, "annotations", None):
                found = self.server.feed(delta)  # the provider's own web search (web_search.py)
                if any(not isinstance(e, Citation) for e in found):
                    self._switch(None, out)  # a search between two paragraphs ends the first
                out.extend(found)
            tool_calls = delta.tool_calls
            if tool_calls:
                self._switch(None, out)
                for position, tc in enumerate(tool_calls):
                    self._tool_fragment(tc, position, out)
                self.received_content = True
        if choice.finish_reason:
            self.finish_reason = choice.finish_reason
        return out

    def _tool_fragment(self, tc: Any, position: int, out: list[StreamEvent]) -> None:
        index = getattr(tc, "index", None)
        call_id = getattr(tc, "id", None) or ""
        fn = getattr(tc, "function", None)
        name = (getattr(fn, "name", None) or "") if fn is not None else ""
        arguments = (getattr(fn, "arguments", None) or "") if fn is not None else ""
        if index is None:
            # No index: a fragment with a new id starts a call, anything else continues the last.
            known = next((a for a in self.tools.values() if call_id and a.call_id == call_id), None)
            if known is not None:
                index = known.index
            elif call_id or not self.tools:
                index = len(self.tools)
            else:
                index = max(self.tools)
        acc = self.tools.get(index)
        if acc is None:
            acc = self.tools[index] = _ToolAcc(index)
        if call_id and not acc.call_id:  # later fragments may carry id "" — never overwrite
            acc.call_id = call_id
        if name and not acc.name:
            acc.name = valid_text(name)
        if arguments:
            acc.arguments.append(valid_text(arguments))
            self.out_chars += len(arguments)
        if not acc.announced and acc.name:
            acc.announced = True
            if not acc.call_id:
                acc.call_id = "call_" + secrets.token_hex(12)
            out.append(ToolInputStart(index, acc.call_id, acc.name))

    def close(self) -> list[StreamEvent]:
        """End open blocks and emit every tool call, in index order."""
        out: list[StreamEvent] = []
        self._switch(None, out)
        for index in sorted(self.tools):
            acc = self.tools[index]
            if not acc.call_id:
                acc.call_id = "call_" + secrets.token_hex(12)
            out.append(ToolCall(index, acc.call_id, acc.name, "".join(acc.arguments)))
        return out

    def output_text(self) -> str:
        """Everything the model wrote this round — text, reasoning, tool calls' names and
        arguments — for a local count of its tokens (as ``call.model_output`` counts parts)."""
        calls = [acc.name + "".join(acc.arguments) for acc in self.tools.values()]
        return "".join(self.text_out + self.reasoning_out + calls)
