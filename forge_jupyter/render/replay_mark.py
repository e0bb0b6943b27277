"""How a replayed turn says so (session/replay.py): on its record, its cell value and its
first notice — "replayed", when the turn was recorded and with which model."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from ..message import Message
from ..metadata_facts import ReplayMark


def recorded_words(mark: ReplayMark | None) -> str:
    """``recorded 2026-11-30 20:01 UTC with openai/gpt-4o-mini`` from a message's replay mark."""
    words = "recorded"
    if mark is not None and mark.recorded_at is not None:
        words += " " + datetime.fromtimestamp(mark.recorded_at, UTC).strftime("%Y-%m-%d %H:%M UTC")
    if mark is not None and mark.model:
        words += f" with {mark.model}"
    return words


def replay_line(messages: Sequence[Message]) -> str | None:
    """One line for a turn with replayed messages; None for a live turn."""
    replayed = [m for m in messages if m.replay_of is not None]
    if not replayed:
        return None
    line = f"↻ Replayed — {recorded_words(replayed[0].replay)} · no model call · $0"
    diverged = next((d for m in replayed if m.replay and (d := m.replay.diverged)), None)
    if diverged is not None:
        line += f" · stopped at {diverged.tool} call {diverged.index}: {diverged.difference}"
        if any(m.role == "assistant" and m.replay_of is None for m in messages):
            line += " · then live"
    return line


def message_replay_line(message: Message) -> str | None:
    """The footer line of a replayed message (its cell value)."""
    if message.replay_of is None:
        return None
    return f"↻ replayed · {recorded_words(message.replay)}"
