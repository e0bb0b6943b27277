"""Poisoned sessions: when a notebook's next ``%%forge`` starts afresh (seed forge-memory-system,
"session max age").

A model whose context holds a run of failed tool calls may stop trying tools altogether. So a
session is set aside — never deleted — when both hold, read from the store alone (so the same
after a kernel restart, on every backend):

- **idle**: its newest message finished longer than ``max_age`` ago (and the session was
  created or forked before that). A session whose newest message is still open (a turn
  running, waiting for an approval, or left by a dead kernel for recovery) is never idle.
- **repeated tool failures**: its most recent ``FAILED_IN_A_ROW`` (3) tool calls all failed.
  The model's tool calls are read from the newest back, across turns, and a call that
  *completed* ends the count: failures behind a success no longer poison anything. Calls
  refused by a permission rule or by the person, and calls cut short by a stop or a crashed
  kernel, are neither failures nor successes — the person's doing, not a broken tool — and
  are passed over. A compaction summary ends the reading (the model no longer sees what
  is behind it), and so does ``LOOKBACK`` messages read without reaching a verdict. A
  person's own commands (``%forge shell``) are not the model's calls and do not count.

A session that is only one of the two is kept: a healthy idle one continues where it
was, and failures a moment ago are the person's to look at (they may well want the model to
try again after fixing something).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from ..message import Message, ToolPart
from ..render.fresh_mark import idle_words
from ..retention import parse_max_age
from ..store.base import Store, encode_cursor
from .replay_match import point_of
from .view import is_summary

FAILED_IN_A_ROW = 3  # the model's latest tool calls that all failed: a poisoned context
LOOKBACK = 60  # messages read back at most for the verdict
_PAGE = 12
_CUT_SHORT = ("aborted:", "interrupted:")  # the error a stop or a dead runner leaves
_ZERO = re.compile(r"^0+(\.0*)?\s*(s|secs?|seconds?|m|mins?|minutes?|h|hours?|d|days?|w|weeks?)?$")
_NUMBER = re.compile(r"^\d+(\.\d*)?$")  # a bare number: seconds
_TOOL_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def session_max_age(value: Any) -> timedelta | None:
    """``Forge.session_max_age`` as a timedelta; None when off (``0``, ``"0m"``, ``""``,
    ``"off"``). Strings as retention takes them ("30m", "1h", "2d"); a bare number is seconds."""
    if value is None:
        return None
    if isinstance(value, timedelta):
        return value if value > timedelta(0) else None
    if isinstance(value, int | float) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        raise ValueError(f"session_max_age takes a duration like '30m' or '1h', or 0 to turn "
                         f"it off; got {value!r}")
    spelled = value.strip().lower()
    if spelled in ("", "off", "none") or _ZERO.match(spelled):
        return None
    if _NUMBER.match(spelled):
        return timedelta(seconds=float(spelled))
    try:
        return parse_max_age(spelled)
    except ValueError:
        raise ValueError(f"session_max_age takes a duration like '30m', '1h' or '2d' (s, m, h, "
                         f"d, w), or 0 to turn it off; got {value!r}") from None


@dataclass(frozen=True)
class Poisoned:
    """Why a session is set aside: idle this long, after these failed calls (newest first)."""

    session_id: str
    name: str | None
    idle: float  # seconds since its newest message
    failed: list[ToolPart] = field(default_factory=list)
    # where its history stood (replay_match.point_of): a replay of the fresh session's first
    # turn starts afresh again only after this same history (notebook/replay_cell.py)
    point: str | None = None

    @property
    def label(self) -> str:
        return f"{self.name} ({self.session_id})" if self.name else self.session_id

    def mark(self) -> dict[str, Any]:
        """What the first turn of the new session keeps of it (its origin's ``fresh_start``)."""
        return {"from": self.session_id, "name": self.name, "idle_seconds": round(self.idle),
                "failed_calls": len(self.failed), "tools": [p.tool for p in self.failed],
                "point": self.point}


def _failures(newest_first: list[Message], found: list[ToolPart]) -> bool | None:
    """Feed messages newest → oldest; True: poisoned, False: not, None: read on."""
    for m in newest_first:
        if is_summary(m):
            return False
        if m.role != "assistant":
            continue
        for p in reversed(m.tool_parts):
            if p.state == "completed":
                return False
            if p.state != "error" or p.metadata.get("permission") == "denied":
                continue
            if (p.error or "").startswith(_CUT_SHORT):
                continue
            found.append(p)
            if len(found) >= FAILED_IN_A_ROW:
                return True
    return None


def _idle_since(store: Store, session_id: str, total: int) -> float | None:
    """When the session's newest message ended (None: it is still open)."""
    [last] = store.timeline(session_id, cursor=encode_cursor(total - 1), limit=1,
                            with_parts=False).items
    if not last.is_terminal:
        return None
    return max(last.created_at, last.completed_at or 0.0)


def poisoned(store: Store, session_id: str, max_age: timedelta | None, *,
             now: float | None = None) -> Poisoned | None:
    """The verdict for one session (module docstring): why to set it aside, or None."""
    if max_age is None:
        return None
    now = time.time() if now is None else now
    with store.hold():  # DuckDB: one opening of the file for the whole verdict
        info = store.get_session(session_id)
        total = store.timeline_length(session_id)
        if total == 0 or now - info.created_at <= max_age.total_seconds():
            return None
        since = _idle_since(store, session_id, total)
        if since is None or now - since <= max_age.total_seconds():
            return None
        found: list[ToolPart] = []
        end, read, verdict = total, 0, None
        while end > 0 and read < LOOKBACK:
            start = max(0, end - _PAGE)
            page = store.timeline(session_id, cursor=encode_cursor(start), limit=end - start).items
            verdict = _failures(list(reversed(page)), found)
            if verdict is not None:
                break
            read += len(page)
            end = start
        if not verdict:
            return None
        point = point_of(store, session_id)
    return Poisoned(session_id, info.name, now - since, found, point)


def notice(old: Poisoned, new_session_id: str, setting: Any) -> str:
    """What the person reads when the notebook moves on to a fresh session (``setting``:
    ``Forge.session_max_age`` as the person set it)."""
    # a failed call's name is the model's (an unknown tool's too): shown only when it is one
    tools = ", ".join(dict.fromkeys(p.tool if _TOOL_NAME.fullmatch(p.tool) else "a misnamed tool"
                                    for p in old.failed))
    return (f"Started a fresh session {new_session_id}: this notebook's session {old.label} had "
            f"been idle for {idle_words(old.idle)} and its last {len(old.failed)} tool calls "
            f"failed ({tools}) — a model that has seen that may stop trying its tools. The old "
            f"session is kept and readable: forge.history({old.session_id!r}), or "
            f"%forge use {old.session_id} to go on in it. Forge.session_max_age "
            f"(now {setting!r}) sets when this happens; 0 turns it off.")
