"""A tool call's arguments as the model sent them → a dict, within bounds (DESIGN §5).

The arguments are the model's, so they are bounded before anything reads them: over
``MAX_ARGUMENT_CHARS`` the call fails unparsed, and nested deeper than ``MAX_ARGUMENT_DEPTH``
it fails too — the schema check, the doom-loop signature, the store and the next request all
walk the arguments, and none of them may meet a ``RecursionError`` or a 30 MB row. What is
kept of refused arguments (``clip``) is a short quote, never the whole.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..scrub import valid_data

MAX_ARGUMENT_CHARS = 1_000_000
MAX_ARGUMENT_DEPTH = 64
_QUOTE = 200


@dataclass(slots=True)
class Parsed:
    """``args`` when the arguments are a JSON object within bounds; else ``problem`` (what the
    model reads) and ``kept`` (what the call's row keeps of them)."""

    args: dict[str, Any] | None = None
    problem: str | None = None
    kept: str | None = None


def clip(raw: str) -> str:
    """What a row keeps of arguments too large to keep: their start, and their size."""
    if len(raw) <= MAX_ARGUMENT_CHARS:
        return raw
    return f"{raw[:_QUOTE]}… [{len(raw):,} characters in all; the rest was not kept]"


def _depth(value: Any) -> int:
    """How deeply ``value`` nests (a scalar: 0), level by level, without recursion; stops
    counting past the bound."""
    level = [value] if isinstance(value, dict | list) else []
    depth = 0
    while level and depth <= MAX_ARGUMENT_DEPTH:
        depth += 1
        below: list[Any] = []
        for item in level:
            for child in item.values() if isinstance(item, dict) else item:
                if isinstance(child, dict | list):
                    below.append(child)
        level = below
    return depth


def parse_arguments(tool: str, raw: str) -> Parsed:
    """The arguments of a call of ``tool``; a refusal says what to do instead."""
    if len(raw) > MAX_ARGUMENT_CHARS:
        return Parsed(problem=(
            f"The arguments for {tool} are {len(raw):,} characters, over the limit of "
            f"{MAX_ARGUMENT_CHARS:,}; the call was not run. Pass large content another way: "
            "write it in several smaller calls, or have code produce it."), kept=clip(raw))
    if not raw or raw.isspace():  # (no stripped copy of a large argument)
        return Parsed(args={})
    try:
        # valid: a JSON escape like "\ud800" decodes to a lone surrogate
        value = json.loads(raw)
    except RecursionError:
        value = None
        deep = True
    except ValueError:
        return Parsed(kept=raw)  # not JSON: the call's check says so, quoting it
    else:
        deep = _depth(value) > MAX_ARGUMENT_DEPTH
    if deep:
        return Parsed(problem=(
            f"The arguments for {tool} nest deeper than {MAX_ARGUMENT_DEPTH} levels; the call "
            "was not run. Call it again with flatter arguments."), kept=raw[:_QUOTE] + "…")
    value = valid_data(value)
    if not isinstance(value, dict):
        return Parsed(kept=raw)
    return Parsed(args=value)
