"""Prune: old tool outputs leave the model's view, never the store (DESIGN §6).

Walking the view newest → oldest, the last ``PROTECTED_TURNS`` user turns are left alone;
beyond them the newest ``PRUNE_PROTECT`` tokens of tool output stay, and every older completed
output is replaced by a short placeholder naming its part — but only when that frees at least
``PRUNE_MINIMUM`` tokens, so a cache-friendly prefix is not rewritten for a few tokens.

A pure function of the view: the stored part keeps its output (``history(part_id=…)`` reads
it back), and as the view grows the pruned set only grows, so earlier requests stay prefixes.
"""

from __future__ import annotations

from ..llm import approx_tokens
from ..message import Message, ToolPart
from .view import is_person_turn

PRUNE_PROTECT = 40_000  # tokens of the newest older-than-two-turns tool output that stay
PRUNE_MINIMUM = 20_000  # prune only when it frees at least this many tokens
PROTECTED_TURNS = 2


def placeholder(part: ToolPart, tokens: int) -> str:
    return (f"[Old output of {part.tool} pruned from context ({tokens:,} tokens); part {part.id}. "
            f'Read it back with history(part_id="{part.id}") if you need it.]')


def _tokens(text: str) -> int:
    return approx_tokens(len(text))


def prune(view: list[Message], *, protect: int = PRUNE_PROTECT, minimum: int = PRUNE_MINIMUM,
          turns: int = PROTECTED_TURNS) -> list[Message]:
    """The view with old tool outputs replaced by placeholders (copies; nothing is written)."""
    seen_turns = 0
    kept = 0
    chosen: dict[str, tuple[ToolPart, int]] = {}  # part id → (part, tokens of its output)
    for m in reversed(view):
        if is_person_turn(m):
            seen_turns += 1
            continue
        if seen_turns < turns or m.role != "assistant":
            continue
        for p in reversed(m.parts):
            if isinstance(p, ToolPart) and p.state == "completed" and p.output:
                size = _tokens(p.output)
                kept += size
                if kept > protect:
                    chosen[p.id] = (p, size)
    if not chosen:
        return view
    freed = sum(size - _tokens(placeholder(p, size)) for p, size in chosen.values())
    if freed < minimum:
        return view
    out = []
    for m in view:
        if any(p.id in chosen for p in m.parts):
            parts = [p.model_copy(update={"output": placeholder(p, chosen[p.id][1]),
                                          "metadata": {**p.metadata, "pruned": True}})
                     if p.id in chosen else p for p in m.parts]
            m = m.model_copy(update={"parts": parts})
        out.append(m)
    return out

