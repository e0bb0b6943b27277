"""Retention: deleting a session, and deleting the sessions idle longer than ``max_age``.

Nothing is ever deleted by default. ``cleanup`` runs when asked, and at a Forge's startup only
when ``max_age`` is configured. A session's age is the time since its last write
(``updated_at``); a session being run (here or by another kernel holding its lease) is
skipped, never cut off mid-turn. Deleting removes the bodies no fork still points at (the
store's rule), and the session's saved full tool outputs. Every deletion is an event
(``session.deleted``), and so is every cleanup (``cleanup``: the cutoff, what it deleted,
what it skipped).
"""

from __future__ import annotations

import os
import re
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

from .errors import NotFound, SessionBusy
from .ids import InvalidId, id_path
from .message import Event
from .session import runner
from .store.base import Store

_UNITS = {"s": 1, "m": 60, "h": 3_600, "d": 86_400, "w": 604_800}
_AGE = re.compile(
    r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|secs|seconds?|m|min|mins|minutes?|h|hours?|d|days?|w|weeks?)\s*$",
    re.IGNORECASE,
)


def parse_max_age(value: timedelta | str | None) -> timedelta | None:
    """A retention age from a timedelta or a string such as ``"30d"``, ``"12h"``, ``"2w"``."""
    if value is None:
        return None
    if isinstance(value, timedelta):
        age = value
    elif isinstance(value, str) and (m := _AGE.match(value)):
        age = timedelta(seconds=float(m.group(1)) * _UNITS[m.group(2)[0].lower()])
    else:
        raise ValueError(
            f"max_age takes a timedelta or a string like '30d', '12h', '90m' or '2w' "
            f"(s, m, h, d, w); got {value!r}"
        )
    if age <= timedelta(0):
        raise ValueError(f"max_age must be positive; got {value!r}")
    return age


def describe(age: timedelta) -> str:
    """``age`` as a person writes it: "30 days", "12 hours", "90 minutes", "45 seconds"."""
    seconds = age.total_seconds()
    for unit, size in (("day", 86_400), ("hour", 3_600), ("minute", 60)):
        if seconds >= size and seconds % size == 0:
            n = int(seconds // size)
            return f"{n} {unit}{'s' if n != 1 else ''}"
    return f"{seconds:g} seconds"


def _refuse_if_running(store: Store, session_id: str) -> None:
    if runner.current(id(store), session_id) is not None:
        raise SessionBusy(f"session {session_id} is answering a prompt; stop it "
                          "(session.abort()) or wait for it to finish before deleting it")
    lease = store.lease(session_id)
    # A lease whose runner is provably gone (a killed kernel of this host) holds nothing back:
    # the next prompt would take it over at once, and so may a deletion.
    if lease is not None and runner.stale_reason(lease[0]) is None:
        raise SessionBusy(runner.busy_message(session_id, *lease))


def _outputs_of(outputs: str | os.PathLike[str] | None, session_id: str) -> tuple[Path | None, str | None]:
    """(the session's own outputs folder, or None; why none, when it has none). The id comes
    from a row anyone may have written: it names a folder only if it is an id of the grammar
    and the folder is one directly under ``outputs`` (``ids.id_path``) — never ``..``, ``/``
    or a link elsewhere."""
    if outputs is None:
        return None, None
    try:
        return id_path(outputs, session_id, "session"), None
    except InvalidId as err:
        return None, str(err)


def delete_session(store: Store, session_id: str, *, actor: str = "user",
                   reason: str = "deleted on request",
                   outputs: str | os.PathLike[str] | None = None) -> Event:
    """Delete one session (its bodies, unless a fork points at them, and its saved outputs
    in ``outputs``, the folder of every session's); record a ``session.deleted`` event and
    return it."""
    _refuse_if_running(store, session_id)
    info = store.get_session(session_id)
    folder, kept = _outputs_of(outputs, session_id)
    store.delete_session(session_id)
    data: dict[str, object] = {"name": info.name, "reason": reason}
    if kept is not None:
        data["outputs_kept"] = kept  # no folder was removed; the event says why
    event = Event(session_id=session_id, type="session.deleted", actor=actor, data=data)
    store.put_event(event)
    if folder is not None and folder.is_dir() and not folder.is_symlink():
        shutil.rmtree(folder, ignore_errors=True)
    return event


def cleanup(store: Store, max_age: timedelta, *, trigger: str = "on demand",
            outputs: str | os.PathLike[str] | None = None, now: datetime | None = None
            ) -> list[str]:
    """Delete every session idle longer than ``max_age``; returns the ids deleted."""
    from .frames import query

    cutoff = (now or datetime.now(UTC)) - max_age
    stale = query(store, "SELECT session_id FROM sessions WHERE updated_at < ? "
                  "ORDER BY updated_at, session_id", [cutoff]).session_id.tolist()
    reason = f"idle for more than {describe(max_age)} (cleanup, {trigger})"
    deleted, skipped = [], []
    for sid in stale:
        try:
            delete_session(store, sid, actor="forge", reason=reason, outputs=outputs)
        except (SessionBusy, NotFound):  # running now, or deleted meanwhile by another kernel
            skipped.append(sid)
        else:
            deleted.append(sid)
    store.put_event(Event(type="cleanup", actor="forge", data={
        "trigger": trigger, "max_age_seconds": max_age.total_seconds(),
        "cutoff": cutoff.isoformat(), "deleted": deleted, "skipped": skipped,
    }))
    return deleted
