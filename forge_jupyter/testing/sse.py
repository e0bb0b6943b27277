"""Server-sent-event framing shared by the fake server's replay and the transcript parser."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

from forge_jupyter.demo.turn import Protocol

__all__ = ["Protocol", "SSEEvent", "detect_protocol", "parse_events", "split_events"]

# An event ends at the first blank line; the last one may end at end-of-file instead.
_EVENT = re.compile(rb".*?(?:\r?\n\r?\n|\Z)", re.S)


def split_events(raw: bytes) -> list[bytes]:
    """Split an SSE body into events, each keeping its trailing blank line: joined, they are `raw`."""
    return [m.group() for m in _EVENT.finditer(raw) if m.group()]


@dataclass(frozen=True)
class SSEEvent:
    event: str | None  # the `event:` field, None when absent
    data: str | None  # the `data:` lines joined by "\n", None when the block is only comments


def parse_events(raw: bytes | str) -> Iterator[SSEEvent]:
    """Parse an SSE body into events (comment lines such as `: OPENROUTER PROCESSING` are skipped)."""
    text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    for block in re.split(r"\r?\n\r?\n", text):
        event: str | None = None
        data: list[str] = []
        for line in block.splitlines():
            if not line or line.startswith(":"):
                continue
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "event":
                event = value
            elif field == "data":
                data.append(value)
        if event is not None or data:
            yield SSEEvent(event, "\n".join(data) if data else None)


def detect_protocol(raw: bytes | str) -> Protocol:
    """Tell an Anthropic messages stream (it opens with `message_start`) from an OpenAI chunk stream."""
    for ev in parse_events(raw):
        if ev.event == "message_start":
            return "anthropic"
        if ev.data and ev.data != "[DONE]":
            try:
                payload = json.loads(ev.data)
            except ValueError:
                continue
            return "anthropic" if payload.get("type") == "message_start" else "openai"
    return "openai"
