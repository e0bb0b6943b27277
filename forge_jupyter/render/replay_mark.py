"""How a replayed turn says so (session/replay.py): on its record, its cell value and its
first notice — "replayed", when the turn was recorded and with which model."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from ..model import Message


def recorded_words(info: dict[str, Any]) -> str:
    """``recorded 2026-11-30 20:01 UTC with openai/gpt-4o-mini`` from ``metadata["replay"]``."""
    words = "recorded"
    at = info.get("recorded_at")
    if isinstance(at, int | float):
        words += " " + datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M UTC")
    if info.get("model"):
        words += f" with {info['model']}"
    return words


def replay_line(messages: Sequence[Message]) -> str | None:
    """One line for a turn with replayed messages; None for a live turn."""
    replayed = [m for m in messages if m.replay_of is not None]
    if not replayed:
        return None
    info = replayed[0].metadata.get("replay") or {}
    line = f"↻ Replayed — {recorded_words(info)} · no model call · $0"
    diverged = next(((m.metadata.get("replay") or {}).get("diverged") for m in replayed
                     if (m.metadata.get("replay") or {}).get("diverged")), None)
    if isinstance(diverged, dict):
        line += f" · stopped at {diverged.get('tool')} call {diverged.get('index')}: {diverged.get('difference')}"
        if any(m.role == "assistant" and m.replay_of is None for m in messages):
            line += " · then live"
    return line


def message_replay_line(message: Message) -> str | None:
    """The footer line of a replayed message (its cell value)."""
    if message.replay_of is None:
        return None
    return f"↻ replayed · {recorded_words(message.metadata.get('replay') or {})}"
