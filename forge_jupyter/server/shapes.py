"""The JSON the REST API answers with, made from what the store and the frames return.

Times are seconds since the epoch (UTC, floats), as in every Message and Part; costs are US
dollars, ``null`` where the price table does not know the model; token counts are integers.
A message is its stored JSON form (``Message.to_json``) with its parts, its position in the
timeline and two marks derived by the ``timeline`` view (store/sql/views.py): ``superseded``
(a compaction took it out of the model's view; it stays stored) and ``boundary`` (a
compaction summary that succeeded) — and ``replayed``: the line saying a message was
replayed from a recorded turn (render/replay_mark.py, the words the cell's record uses), or
null for a live one.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ..render.replay_mark import message_replay_line

if TYPE_CHECKING:
    from ..message import Message


def _opt(value: Any) -> Any:
    """A frame's missing value (NaN, NaT, pd.NA, None) as JSON null."""
    if value is None:
        return None
    try:
        import pandas as pd

        if pd.isna(value):
            return None
    except (TypeError, ValueError):  # a list or another value pandas cannot test
        pass
    return value


def _seconds(value: Any) -> float | None:
    value = _opt(value)
    return None if value is None else value.timestamp()


def _money(value: Any) -> float | None:
    value = _opt(value)
    return None if value is None or math.isnan(float(value)) else float(value)


def session_row(row: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """One session of ``frames.sessions`` (``row``) with what the page query adds (``extra``:
    notebook, children) as the API shows it. ``parent_id`` is the session it branched from in
    the tree — the one it was forked from, else the one that spawned it as a subtask."""
    forked_from = _opt(row["forked_from_session"])
    subtask_of = _opt(row["parent_id"])
    models = _opt(row["models"])
    return {
        "id": row["session_id"],
        "name": _opt(row["name"]),
        "title": _opt(row["title"]),
        "notebook": _opt(extra.get("notebook")),
        "agent": _opt(row["agent"]),
        "model": _opt(row["model"]),
        "models": models.split(", ") if models else [],
        "created": _seconds(row["created_at"]),
        "updated": _seconds(row["updated_at"]),
        "messages": int(row["messages"]),
        "steps": int(row["steps"]),
        "cost": _money(row["cost"]),
        "tokens": {"input": int(row["tokens_input"]), "output": int(row["tokens_output"])},
        "parent_id": forked_from or subtask_of,
        "relation": "fork" if forked_from else "subtask" if subtask_of else None,
        "forked_from_session_id": forked_from,
        "forked_from_message_id": _opt(row["forked_from_message"]),
        "subtask_of": subtask_of,
        "children": int(extra.get("children") or 0),
    }


def totals(row: dict[str, Any], scope: str) -> dict[str, Any]:
    """The cost totals of one scope, from the columns ``<scope>_<name>`` of the totals query."""
    def count(name: str) -> int:
        value = _opt(row.get(f"{scope}_{name}"))
        return 0 if value is None else int(value)

    steps = count("steps")
    return {
        # nothing spent is $0 (also with no store yet); null only where a price is unknown
        "cost": _money(row.get(f"{scope}_cost")) if steps else 0,
        "input_tokens": count("input_tokens"),
        "output_tokens": count("output_tokens"),
        "turns": count("turns"),
        "steps": steps,
        "unpriced_steps": count("unpriced_steps"),
    }


def message_json(message: Message, pos: int, superseded: bool, boundary: bool) -> dict[str, Any]:
    """A message of the timeline with its parts and its place in it."""
    return {
        **message.to_json(),
        "parts": [p.to_json() for p in message.parts],
        "pos": pos,
        "superseded": superseded,
        "boundary": boundary,
        "replayed": message_replay_line(message),
    }


def boundary_json(row: dict[str, Any]) -> dict[str, Any]:
    """One compaction boundary of a timeline (the ``boundaries`` query of reader.py)."""
    def flag(name: str) -> bool | None:
        value = _opt(row.get(name))
        return None if value is None else bool(value)

    def number(name: str) -> int | None:
        value = _opt(row.get(name))
        return None if value is None else int(value)

    return {
        "pos": int(row["pos"]),
        "message_id": row["message_id"],
        "request_pos": number("request_pos"),
        "request_message_id": _opt(row["request_message_id"]),
        "created": _seconds(row.get("created_at")),
        "auto": flag("auto"),
        "extractive": flag("extractive"),
        "reason": _opt(row.get("reason")),
        "tokens_before": number("tokens_before"),
        "tokens_after": number("tokens_after"),
    }
