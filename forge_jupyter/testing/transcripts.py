"""Recorded provider streams (`tests/data/transcripts/*.sse`, in the repo with their `SOURCES.md`)
and what their wire carried.

`parse_wire()` reads the raw SSE alone — no litellm — so tests can hold litellm's view (and the
stored parts) against the bytes the provider sent.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any

from forge_jupyter.demo.wire import openai_finish
from forge_jupyter.testing.sse import Protocol, detect_protocol, parse_events

# Test data, kept in the repository beside the tests that read it: a clone passes alone.
REPO_TRANSCRIPTS = Path(__file__).resolve().parents[2] / "tests" / "data" / "transcripts"


def find_transcripts_dir() -> Path | None:
    """$FORGE_TRANSCRIPTS_DIR (another set of recordings), else the repo's tests/data/transcripts;
    None when neither is there (an installed wheel carries no tests)."""
    if env := os.environ.get("FORGE_TRANSCRIPTS_DIR"):
        return Path(env)
    return REPO_TRANSCRIPTS if REPO_TRANSCRIPTS.is_dir() else None


TRANSCRIPTS_DIR: Path | None = find_transcripts_dir()


def list_transcripts(directory: str | PathLike[str] | None = None) -> list[Path]:
    """The `.sse` files in `directory` (default TRANSCRIPTS_DIR), sorted; [] when there is none."""
    folder = Path(directory) if directory is not None else TRANSCRIPTS_DIR
    return sorted(folder.glob("*.sse")) if folder is not None and folder.is_dir() else []


@dataclass
class WireToolCall:
    index: int
    id: str = ""  # the first non-empty id
    name: str = ""  # the first non-empty name
    arguments: str = ""  # every fragment, concatenated

    @property
    def valid_json(self) -> bool:
        try:
            json.loads(self.arguments)
        except ValueError:
            return False
        return True


@dataclass
class WireUsage:
    prompt_tokens: int | None
    completion_tokens: int | None
    total_tokens: int | None = None


@dataclass
class WireResult:
    protocol: Protocol
    text: str = ""
    reasoning: str = ""
    tool_calls: list[WireToolCall] = field(default_factory=list)
    finish_reason: str | None = (
        None  # OpenAI vocabulary: stop / tool_calls / length / content_filter
    )
    raw_finish_reason: str | None = None  # as the provider spelled it
    usage: WireUsage | None = None
    error: dict[str, Any] | None = None  # a mid-stream error object


def parse_wire(path: str | PathLike[str] | bytes) -> WireResult:
    """What an SSE body carried: text, reasoning, tool calls by index, finish, usage, error."""
    raw = path if isinstance(path, bytes) else Path(path).read_bytes()
    result = WireResult(detect_protocol(raw))
    calls: dict[int, WireToolCall] = {}  # by OpenAI index, or by Anthropic content-block index
    parse = _anthropic_event if result.protocol == "anthropic" else _openai_chunk
    for ev in parse_events(raw):
        if ev.data is None or ev.data.strip() == "[DONE]":
            continue
        parse(json.loads(ev.data), result, calls)
    result.tool_calls = [calls[i] for i in sorted(calls)]
    if result.protocol == "anthropic":
        for position, call in enumerate(result.tool_calls):
            call.index = position
    if result.raw_finish_reason is not None:
        result.finish_reason = openai_finish(result.raw_finish_reason)
    return result


def _openai_chunk(
    chunk: dict[str, Any], result: WireResult, calls: dict[int, WireToolCall]
) -> None:
    if chunk.get("error"):
        result.error = chunk["error"]
    if usage := chunk.get("usage"):
        result.usage = WireUsage(
            usage.get("prompt_tokens"), usage.get("completion_tokens"), usage.get("total_tokens")
        )
    for choice in chunk.get("choices") or []:
        delta = choice.get("delta") or {}
        result.text += delta.get("content") or ""
        result.reasoning += delta.get("reasoning_content") or delta.get("reasoning") or ""
        for position, frag in enumerate(delta.get("tool_calls") or []):
            index = frag.get("index", position)
            call = calls.setdefault(index, WireToolCall(index))
            fn = frag.get("function") or {}
            call.id = call.id or frag.get("id") or ""
            call.name = call.name or fn.get("name") or ""
            call.arguments += fn.get("arguments") or ""
        if choice.get("finish_reason"):
            result.raw_finish_reason = choice["finish_reason"]


def _anthropic_event(
    event: dict[str, Any], result: WireResult, calls: dict[int, WireToolCall]
) -> None:
    kind = event.get("type")
    if kind == "message_start":
        usage = event.get("message", {}).get("usage")
        if usage:
            result.usage = WireUsage(_anthropic_prompt(usage), usage.get("output_tokens"))
    elif kind == "content_block_start":
        block = event.get("content_block") or {}
        if block.get("type") == "tool_use":
            # keyed by content block for now; renumbered 0, 1, … over tool_use blocks at the end,
            # as OpenAI (and litellm) number tool calls
            block_index = int(event.get("index", len(calls)))
            calls[block_index] = WireToolCall(
                block_index, block.get("id") or "", block.get("name") or ""
            )
        elif block.get("type") == "text":
            result.text += block.get("text") or ""
        elif block.get("type") == "thinking":
            result.reasoning += block.get("thinking") or ""
    elif kind == "content_block_delta":
        delta = event.get("delta") or {}
        if delta.get("type") == "text_delta":
            result.text += delta.get("text") or ""
        elif delta.get("type") == "thinking_delta":
            result.reasoning += delta.get("thinking") or ""
        elif delta.get("type") == "input_json_delta":
            calls[int(event.get("index", 0))].arguments += delta.get("partial_json") or ""
    elif kind == "message_delta":
        if stop := (event.get("delta") or {}).get("stop_reason"):
            result.raw_finish_reason = stop
        if usage := event.get("usage"):
            prompt = _anthropic_prompt(usage) if "input_tokens" in usage else None
            before = result.usage or WireUsage(None, None)
            result.usage = WireUsage(
                prompt if prompt is not None else before.prompt_tokens,
                usage.get("output_tokens", before.completion_tokens),
            )
    elif kind == "error":
        result.error = event.get("error") or event


def _anthropic_prompt(usage: dict[str, Any]) -> int:
    """Anthropic's input_tokens exclude cache reads and writes; count them in, as OpenAI does."""
    return sum(
        int(usage.get(k) or 0)
        for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
    )
