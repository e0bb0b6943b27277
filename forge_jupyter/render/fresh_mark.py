"""How the first turn of a fresh session says so (session/poisoned.py): on its record, a line
naming the session the notebook set aside, why, and how to go back to it."""

from __future__ import annotations

from collections.abc import Sequence

from ..message import Message


def idle_words(seconds: float) -> str:
    """How long, as a person says it: "45 minutes", "3 hours", "2 days"."""
    for unit, size in (("day", 86_400), ("hour", 3_600), ("minute", 60)):
        if seconds >= size:
            n = int(seconds // size)
            return f"{n} {unit}{'s' if n != 1 else ''}"
    n = int(seconds)
    return f"{n} second{'s' if n != 1 else ''}"


def fresh_line(messages: Sequence[Message]) -> str | None:
    """The record's line for a turn that began a fresh session (its user message's
    ``origin["fresh_start"]``, session/poisoned.py); None for any other turn."""
    first = next((m for m in messages if m.role == "user"), None)
    if first is None or first.replay_of is not None:  # a replay says what it is itself
        return None
    mark = (first.origin or {}).get("fresh_start")
    if not isinstance(mark, dict) or not isinstance(mark.get("from"), str):
        return None
    old = f"{mark['name']} ({mark['from']})" if isinstance(mark.get("name"), str) else mark["from"]
    why = []
    if isinstance(idle := mark.get("idle_seconds"), int | float):
        why.append(f"idle for {idle_words(float(idle))}")
    if isinstance(failed := mark.get("failed_calls"), int):
        why.append(f"its last {failed} tool calls failed")
    return (f"↺ New session — {old} was set aside ({', '.join(why) or 'poisoned'}); it is "
            f"still readable: %forge use {mark['from']}")
