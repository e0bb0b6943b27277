"""Move history between stores: ``forge-jupyter copy SRC DST`` and ``Forge.copy_to`` (DESIGN §3).

Sessions are read from one store and written into another through the ``Store`` contract's
public methods only, so any two backends work (DuckDB file → PostgreSQL and back). Ids,
timestamps, messages, parts, timeline order and events are kept as they are; then every
copied session is read back from the destination and compared with the source, row for row.

A copy never overwrites. Before anything is written it checks, for every session: its id (a
live or deleted session), its name, and its message ids are free in the destination;
and it replays the whole copy into a scratch memory store, so a session the store's rules
would refuse is found before the first write. Each session is then written in one
transaction (``create_session_with``), so none is ever half there.

A fork shares its first messages with the session it was forked from (the bodies belong to
that parent). It is copied with ``Store.fork`` from the parent's copy, then its own messages
are written; so its parent must be copied in the same run (``--session`` both).
The destination's ``fork`` event replaces the source's (same data, a new id and time), and
``updated_at`` says when the session last changed in the destination: no backend lets a
caller set either, so the verification leaves those two out.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import DuplicateId, ForgeError, NotFound, SessionDeleted
from .message import Event, Message, SessionInfo
from .store.base import Store
from .store.inmemory.store import MemoryStore
from .store.ops import AppendMessage, Op, PutEvent, PutMessage, PutPart


class CopyFailed(ForgeError):
    """A copy that was refused (nothing was written) or that went wrong while writing."""


@dataclass(slots=True)
class SessionCopy:
    """One session as read from the source: what is written, and what it is checked against."""

    info: SessionInfo
    messages: list[Message]
    events: list[Event]
    shared: int = 0  # the first ``shared`` messages of a fork belong to its parent

    @property
    def own(self) -> list[Message]:
        return self.messages[self.shared:]

    def ops(self) -> list[Op]:
        """The batch writing the session's own rows (a fork's shared prefix comes from ``fork``)."""
        sid = self.info.id
        ops: list[Op] = []
        for m in self.own:
            ops.append(PutMessage(m.row()))
            ops.extend(PutPart(p) for p in m.parts)
            ops.append(AppendMessage(sid, m.id))
        ops.extend(PutEvent(e) for e in self.events if not (self.shared and e.type == "fork"))
        return ops


@dataclass(slots=True)
class CopyReport:
    """What was copied (and verified): session ids in the order written, and row counts."""

    sessions: list[str] = field(default_factory=list)
    messages: int = 0
    parts: int = 0
    events: int = 0

    def __str__(self) -> str:
        return (f"copied and verified {len(self.sessions)} session(s): {self.messages} messages, "
                f"{self.parts} parts, {self.events} events")


def _all(page_of: Any) -> list[Any]:
    items: list[Any] = []
    cursor: str | None = None
    while True:
        page = page_of(cursor)
        items.extend(page.items)
        if page.next_cursor is None:
            return items
        cursor = page.next_cursor


def read_session(store: Store, session_id: str) -> SessionCopy:
    with store.hold():
        info = store.get_session(session_id)
        messages = store.read_timeline(session_id)
        events = _all(lambda c: store.events(session_id, cursor=c, limit=500))
    shared = 0
    while shared < len(messages) and messages[shared].session_id != session_id:
        shared += 1
    if any(m.session_id != session_id for m in messages[shared:]):
        raise CopyFailed(f"session {session_id}: its timeline holds another session's message "
                         "after one of its own, which no fork makes. Nothing was copied.")
    return SessionCopy(info, messages, events, shared)


def _selected(src: Store, sessions: Iterable[str] | None) -> list[SessionInfo]:
    if sessions is None:
        return _all(lambda c: src.list_sessions(cursor=c, limit=500))
    chosen: dict[str, SessionInfo] = {}
    for name_or_id in sessions:
        try:
            info = src.find_session(name_or_id)
        except NotFound as err:
            raise CopyFailed(f"no session {name_or_id!r} to copy in the source ({err}). "
                             "Nothing was copied.") from None
        chosen[info.id] = info
    return list(chosen.values())


def _parents_first(copies: list[SessionCopy]) -> list[SessionCopy]:
    by_id = {c.info.id: c for c in copies}
    ordered: list[SessionCopy] = []
    placed: set[str] = set()

    def place(c: SessionCopy) -> None:
        if c.info.id in placed:
            return
        placed.add(c.info.id)
        parent = by_id.get(c.info.forked_from_session or "") if c.shared else None
        if parent is not None:
            place(parent)
        ordered.append(c)

    for c in sorted(copies, key=lambda c: (c.info.created_at, c.info.id)):
        place(c)
    return ordered


# A timeline row read in a page costs ~15 µs (DuckDB) to ~40 µs (PostgreSQL); one id looked
# up, 1.5 to 3 ms (benchmarks/bench_copy.py): reading is cheaper below ~50 rows per id.
SCAN_FACTOR = 50


def _known_messages(dst: Store, wanted: int) -> set[str] | None:
    """Every message id the destination's live timelines show, when reading them costs less
    than looking up ``wanted`` ids one by one (a query each); None when it costs more.

    A destination's message is in some live timeline: bodies leave with their session, unless
    a fork (live) still points at them. Reading a timeline's rows is a page per 5,000, so a
    new or small destination is checked at once, a large one id by id."""
    sessions = _all(lambda c: dst.list_sessions(cursor=c, limit=500))
    lengths = {s.id: dst.timeline_length(s.id) for s in sessions}
    if sum(lengths.values()) > SCAN_FACTOR * wanted:
        return None
    known: set[str] = set()
    for sid, length in lengths.items():
        if length:
            known.update(m.id for m in dst.timeline(sid, limit=length, with_parts=False).items)
    return known


def _taken(dst: Store, copy: SessionCopy, known: set[str] | None) -> str | None:
    """Why ``copy`` cannot go into ``dst`` without overwriting something, or None."""
    sid = copy.info.id
    try:
        dst.get_session(sid)
        return f"session {sid} is already in the destination"
    except SessionDeleted:  # its tombstone keeps the id
        return f"session {sid} was deleted in the destination (its id stays taken)"
    except NotFound:
        pass
    if copy.info.name is not None:
        try:
            other = dst.find_session(copy.info.name)
            return f"the name {copy.info.name!r} (session {sid}) is taken there by session {other.id}"
        except NotFound:
            pass
    # Part ids are not looked up (one query each, the longest part of the check): a part is
    # only ever written with its message, so a part of ours already there means its message is.
    for m in copy.own:
        if known is not None:
            if m.id in known:
                return f"message {m.id} of session {sid} is already in the destination"
            continue
        try:
            dst.get_message(m.id, with_parts=False)
            return f"message {m.id} of session {sid} is already in the destination"
        except NotFound:
            pass
    return None


def _write(dst: Store, copy: SessionCopy) -> None:
    if not copy.shared:
        dst.create_session_with(copy.info, copy.ops())
        return
    at = copy.info.forked_from_message
    assert copy.info.forked_from_session is not None and at is not None  # checked in plan()
    dst.fork(copy.info.forked_from_session, at, copy.info)
    dst.write(copy.ops())


def _norm(value: Any, key: str = "") -> Any:
    """JSON rows made comparable across backends: instants to the microsecond (what DuckDB's
    and PostgreSQL's timestamps hold), nothing else touched."""
    if isinstance(value, dict):
        return {k: _norm(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_norm(v) for v in value]
    if isinstance(value, float) and key.endswith("_at"):
        return round(value, 6)
    return value


def _event_key(e: Event, fork_replaced: bool) -> Any:
    row = e.to_json()
    if fork_replaced and e.type == "fork":  # made anew by the destination's fork()
        row = {k: row[k] for k in ("session_id", "type", "actor", "data")}
    return _norm(row)


def verify(src_copy: SessionCopy, dst: Store) -> None:
    """Compare the session as the destination holds it with the source, row for row."""
    sid = src_copy.info.id
    got = read_session(dst, sid)

    def differ(what: str) -> CopyFailed:
        return CopyFailed(f"session {sid} was written but reads back different {what} from the "
                          "destination: the copy is not faithful. Compare it there, or delete it "
                          "and copy again.")

    def info(s: SessionInfo) -> Any:
        return _norm({k: v for k, v in s.to_json().items() if k != "updated_at"})

    if info(got.info) != info(src_copy.info):
        raise differ("session info")
    if [m.id for m in got.messages] != [m.id for m in src_copy.messages]:
        raise differ("timeline order")
    for a, b in zip(got.messages, src_copy.messages, strict=True):
        if _norm(a.row().to_json()) != _norm(b.row().to_json()):
            raise differ(f"message {a.id}")
        if [_norm(p.to_json()) for p in a.parts] != [_norm(p.to_json()) for p in b.parts]:
            raise differ(f"parts of message {a.id}")
    fork = bool(src_copy.shared)
    if sorted(map(repr, (_event_key(e, fork) for e in got.events))) != sorted(
        map(repr, (_event_key(e, fork) for e in src_copy.events))
    ):
        raise differ("events")


def plan(src: Store, dst: Store, sessions: Iterable[str] | None = None) -> list[SessionCopy]:
    """Read the sessions to copy and check that every one can go in; writes nothing."""
    copies = [read_session(src, info.id) for info in _selected(src, sessions)]
    chosen = {c.info.id for c in copies}
    for c in copies:
        parent = c.info.forked_from_session
        if c.shared and (parent is None or c.info.forked_from_message is None):
            raise CopyFailed(f"session {c.info.id} shares messages of another session but does "
                             "not say which it was forked from. Nothing was copied.")
        if c.shared and parent not in chosen:
            raise CopyFailed(
                f"session {c.info.id} is a fork of session {parent} and shares its first "
                f"{c.shared} message(s), so it can only be copied together with it: copy both "
                f"(--session {parent} --session {c.info.id}). Nothing was copied.")
    ordered = _parents_first(copies)
    with dst.hold():
        known = _known_messages(dst, sum(len(c.own) for c in ordered))
        for c in ordered:
            why = _taken(dst, c, known)
            if why is not None:
                raise CopyFailed(f"{why}. A copy never overwrites: nothing was copied. Leave that "
                                 "session out (--session …) or delete it from the destination first.")
    scratch = MemoryStore(tenant_id=dst.tenant_id)  # the store's own rules, before any write
    try:
        for c in ordered:
            _write(scratch, c)
    except ForgeError as err:
        raise CopyFailed(f"the source holds a session the store's rules refuse ({err}). "
                         "Nothing was copied.") from None
    return ordered


def copy_sessions(src: Store, dst: Store, sessions: Iterable[str] | None = None) -> CopyReport:
    """Copy live sessions (all, or those named by id or name) from ``src`` into ``dst``."""
    ordered = plan(src, dst, sessions)
    report = CopyReport()
    for c in ordered:
        try:
            _write(dst, c)
        except DuplicateId as err:  # a row another tenant holds, or one written meanwhile
            raise CopyFailed(_partial(report, c, f"the destination refused a duplicate id ({err})"
                                      "; a copy never overwrites")) from None
        except ForgeError as err:
            raise CopyFailed(_partial(report, c, str(err))) from None
        verify(c, dst)
        report.sessions.append(c.info.id)
        report.messages += len(c.own)
        report.parts += sum(len(m.parts) for m in c.own)
        report.events += len(c.events)
    return report


def _partial(report: CopyReport, failed: SessionCopy, why: str) -> str:
    done = ", ".join(report.sessions) or "none"
    return (f"session {failed.info.id} was not copied: {why}. Sessions copied and verified before "
            f"it: {done}; nothing of {failed.info.id} was written"
            f"{' beyond its fork' if failed.shared else ''}. Copy the rest with --session.")


@contextlib.contextmanager
def destination(where: str | os.PathLike[str] | Store,
                opener: Callable[[], Store]) -> Iterator[Store]:
    """The copy's destination: ``where`` itself when it is a Store (left open), else the
    store ``opener`` opens (closed at the end). A DuckDB file this copy created is removed
    again when the copy fails before a session landed in it: a refused copy leaves no empty
    database behind, where the person would then find a file and think something was copied."""
    if isinstance(where, Store):
        yield where
        return
    text = os.fspath(where)
    created = "://" not in text and not Path(os.path.expanduser(text)).exists()
    target = opener()
    try:
        yield target
    except CopyFailed:
        if created and not target.list_sessions(limit=1).items:
            files = target.files()
            target.close()
            for file in files:
                file.unlink(missing_ok=True)
        raise
    finally:
        target.close()
