"""The projection: full rows from the write entry, committed to the store in groups.

``update_message``/``update_part`` hand their rows here; nothing reaches the database until
``flush()``, which writes everything buffered as ONE batch (one transaction). Rows are
coalesced by id — a tool part that went pending → running → completed between two flushes is
written once, in its latest state — so a streamed turn costs about one row per part and per
message, whatever the number of deltas. The session core flushes before every model request
and at the end of a turn: every full row is durable before the next request is sent.

Two ways a batch can fail, told apart because they need opposite answers:

- **the store is unavailable** (a lock held by another program, a full disk, a damaged file):
  nothing is wrong with the rows. They go back in front of anything buffered since and the
  error is raised; the next flush retries them.
- **the store rejects a row** (a value that cannot be serialized, a row the store contract
  refuses): retrying the batch would fail forever and wedge every later flush of the process.
  The batch is split (bisected) until the refused rows stand alone; every other row is
  written; each refused row is replaced by a small stand-in that says why (a part by a
  synthetic text part, a message by a row with its error, an event by one with the reason),
  the message it belonged to is marked (``metadata["not_stored"]``, and its ``error`` — an
  assistant's status becomes ``error``) and a ``store.rejected`` event lists what was lost.

A run's rows are fenced by its runner lease (``fence``, fence.py): a flush writes them only
while the run still holds the session's lease. Once it is lost to another runner, they are
dropped — that session's only — and the run is told, so it stops.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from ..errors import LeaseLost, SchemaTooNew, StoreUnavailable, StoreUnreadable
from ..message import ErrorInfo, Event, Message, Part, TextPart, now
from .base import Store
from .fence import Fences, OnLost, session_of
from .ops import AppendMessage, Op, PutEvent, PutMessage, PutPart
from .salvage import Key, Rejected, marked, safe, splittable
from .salvage import reason as refusal

log = logging.getLogger(__name__)
_FINISHED_MARKED_KEPT = 64  # finished marked messages remembered for as_stored()


class _Halt(Exception):
    """The store became unavailable while a failed batch was being split."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


def unavailable(exc: BaseException) -> bool:
    """True when the store, not a row, is the problem: keep the rows and retry later."""
    return isinstance(exc, StoreUnavailable | StoreUnreadable | SchemaTooNew | OSError
                      | MemoryError)


class Projection:
    def __init__(self, store: Store,
                 on_rejected: Callable[[list[Rejected]], None] | None = None) -> None:
        self.store = store
        self.on_rejected = on_rejected  # told about refused rows (the Forge shows a notice)
        self._buffer: dict[Key, Op] = {}
        self._lock = threading.Lock()
        self._flush_lock = threading.Lock()
        # Messages with a refused row: what was lost, noted on their rows until they finish.
        self._damaged: dict[str, list[str]] = {}
        # Their final rows as written (marked), until the run that made them asks: the
        # message a prompt returns is then the one the store holds. The last few only.
        self._finished_marked: dict[str, Message] = {}
        self.rows_written = 0  # for write-amplification figures
        self.batches_written = 0
        self.rows_rejected = 0
        self.rows_fenced = 0  # rows of a run that had lost its lease: dropped, never written
        self.fences = Fences()

    # -- lease fences (fence.py) --------------------------------------------------------------

    def fence(self, session_id: str, owner: str, on_lost: OnLost | None = None) -> None:
        """Write the session's rows only while ``owner`` holds its runner lease; ``on_lost``
        is told, once and from the flushing thread, when it no longer does."""
        self.fences.fence(session_id, owner, on_lost)

    def unfence(self, session_id: str, owner: str) -> None:
        """``owner``'s run is over. Rows of a lost lease go now; rows it left buffered (the
        store was unavailable) stay fenced by its lease until a flush settles them."""
        with self._lock:
            if self.fences.lost(session_id, owner) is not None:
                self._drop(session_id)
            keep = any(session_of(op) == session_id for op in self._buffer.values())
            self.fences.end(session_id, owner, keep=keep)

    def lose(self, session_id: str, owner: str, error: LeaseLost) -> None:
        """``owner`` lost the session's lease (its heartbeat found out): drop its rows."""
        self.fences.lose(session_id, owner, error)
        with self._lock:
            self._drop(session_id)

    def _drop(self, session_id: str) -> None:
        """Under ``_lock``: forget the buffered rows of a session whose lease was lost."""
        kept = {k: op for k, op in self._buffer.items() if session_of(op) != session_id}
        self.rows_fenced += len(self._buffer) - len(kept)
        self._buffer = kept

    def _write(self, ops: list[Op]) -> list[Op]:
        """``store.write`` fenced by the runs' leases (``Fences.write``); the ops written."""
        written, dropped = self.fences.write(self.store, ops)
        self.rows_fenced += dropped
        return written

    def put_message(self, message: Message) -> None:
        with self._lock:
            self._buffer[("message", message.id)] = PutMessage(message)

    def put_part(self, part: Part) -> None:
        with self._lock:
            self._buffer[("part", part.id)] = PutPart(part)

    def append(self, session_id: str, message_id: str) -> None:
        with self._lock:
            self._buffer[("append", session_id, message_id)] = AppendMessage(session_id, message_id)

    def put_event(self, event: Event) -> None:
        with self._lock:
            self._buffer[("event", event.id)] = PutEvent(event)

    @property
    def pending(self) -> int:
        return len(self._buffer)

    def flush(self) -> int:
        """Commit what is buffered as one batch; returns the number of rows written.

        The store unavailable: the rows are kept for the next flush and the error is raised.
        A row the store rejects: it is isolated, reported and dropped; the rest is written
        and nothing is raised (see the module docstring).
        """
        with self._flush_lock:
            with self._lock:
                for sid in {session_of(op) for op in self._buffer.values()}:
                    if self.fences.lost(sid) is not None:
                        self._drop(sid)  # rows of a run that lost its lease never go in
                if not self._buffer:
                    return 0
                batch, self._buffer = self._buffer, {}
            try:
                ops = self._write(self._amended(list(batch.values())))
            except Exception as exc:
                if unavailable(exc):
                    self._put_back(batch)
                    raise
                written = self._salvage(batch, exc)
            except BaseException:
                self._put_back(batch)
                raise
            else:
                self._settled(ops)
                written = len(ops)
            with self._lock:
                self.fences.settle({session_of(op) for op in self._buffer.values()})
            self.rows_written += written
            self.batches_written += 1
            return written

    def _put_back(self, rows: dict[Key, Op]) -> None:
        """In front of anything buffered since; a newer version of a row wins."""
        with self._lock:
            newer, self._buffer = self._buffer, dict(rows)
            self._buffer.update(newer)

    # -- isolating refused rows -------------------------------------------------------------

    def _salvage(self, batch: dict[Key, Op], first: Exception) -> int:
        """Write every row of a failed batch that the store accepts; report the others."""
        plan = splittable(list(batch.items()))
        damaged_before = {mid: list(notes) for mid, notes in self._damaged.items()}
        rejected: list[Rejected] = []
        written: set[Key] = set()
        wrote_anything = False
        cursor = 0  # plan[:cursor] is settled: written, or rejected and reported

        def attempt(lo: int, hi: int) -> None:
            nonlocal wrote_anything, cursor
            cursor = lo
            ops = self._amended([op for _key, op in plan[lo:hi]])
            try:
                self._write(ops)
            except Exception as exc:
                if unavailable(exc):
                    raise _Halt(exc) from exc
                if hi - lo == 1:
                    if self._reject(plan[lo][1], exc, rejected):
                        wrote_anything = True
                    cursor = hi
                    return
                mid = (lo + hi) // 2
                attempt(lo, mid)  # left first: a message's row lands before its parts
                attempt(mid, hi)
                return
            self._settled(ops)
            written.update(key for key, op in plan[lo:hi]
                           if self.fences.lost(session_of(op)) is None)
            wrote_anything = True
            cursor = hi

        try:
            with self.store.hold():  # one opening of the file for the whole search
                attempt(0, len(plan))
                wrote_anything = self._report(rejected) or wrote_anything
        except BaseException as exc:
            # The store went away meanwhile: what is not settled yet waits for the next flush.
            pending = {key for key, _op in plan[cursor:]}
            self._put_back({k: op for k, op in batch.items() if k in pending})
            if isinstance(exc, _Halt):
                raise exc.cause from None
            raise
        if not wrote_anything:
            # Not a single row, stand-in or report went in: the store itself is failing (in a
            # way it does not name), so dropping rows would lose them for nothing.
            self._damaged = damaged_before
            self._put_back(batch)
            raise first
        self.rows_rejected += len(rejected)
        if rejected:
            log.warning("forge-jupyter: the store refused %d row(s); the rest was written. %s",
                        len(rejected), "; ".join(r.describe() for r in rejected[:5]))
            if self.on_rejected is not None:
                try:
                    self.on_rejected(rejected)
                except Exception:  # a notice must never undo a flush
                    log.exception("on_rejected callback failed")
        return len(written)

    def _reject(self, op: Op, exc: Exception, rejected: list[Rejected]) -> bool:
        """Record one refused row and write its stand-in; True if the stand-in went in."""
        reason = refusal(exc)

        def record(row: Rejected, note: str | None = None) -> None:
            # A message's row may be refused twice (as running, then finished): report once.
            if not any((r.kind, r.id) == (row.kind, row.id) for r in rejected):
                rejected.append(row)
            if note is not None and row.message_id is not None:
                notes = self._damaged.setdefault(row.message_id, [])
                if note not in notes:
                    notes.append(note)

        stand_in: Op
        if isinstance(op, PutPart):
            p = op.part
            record(Rejected("part", p.id, p.session_id, p.message_id, reason),
                   f"part {p.id} ({p.type}) was not stored: {reason}")
            stand_in = PutPart(TextPart(
                id=p.id, session_id=p.session_id, message_id=p.message_id, synthetic=True,
                created_at=p.created_at, time_start=now(),
                time_end=now() if p.is_terminal else None,
                text=f"[This {p.type} part could not be stored: {reason}]",
                metadata={"not_stored": {"type": p.type, "reason": reason}},
            ))
        elif isinstance(op, PutMessage):
            m = op.message
            note = f"the message's row was not stored as sent: {reason}"
            record(Rejected("message", m.id, m.session_id, m.id, reason), note)
            stand_in = PutMessage(Message(
                id=m.id, session_id=m.session_id, role=m.role, parent_id=m.parent_id,
                agent=safe(m.agent), model=safe(m.model) if m.model else None,
                status="error" if m.is_terminal else m.status, summary=m.summary,
                finish=safe(m.finish) if m.finish else None,
                error=ErrorInfo(type="not_stored", message=note) if m.is_terminal else None,
                tokens=m.tokens, cost=m.cost, created_at=m.created_at,
                completed_at=m.completed_at,
                metadata={"not_stored": [note]},
            ))
        elif isinstance(op, AppendMessage):
            record(Rejected("append", op.message_id, op.session_id, op.message_id, reason))
            return False  # a pointer has nothing to stand in for it; the report says it
        else:
            assert isinstance(op, PutEvent)
            e = op.event
            record(Rejected("event", e.id, e.session_id, None, reason))
            stand_in = PutEvent(Event(id=e.id, session_id=e.session_id, type=safe(e.type),
                                      actor=safe(e.actor), created_at=e.created_at,
                                      data={"not_stored": reason}))
        try:
            if not self._write([stand_in]):
                return False  # its session's lease was lost: nothing of it goes in
        except Exception as exc2:
            if unavailable(exc2):
                raise _Halt(exc2) from exc2
            return False  # its message is missing too, say: the report still names the row
        return True

    def _report(self, rejected: list[Rejected]) -> bool:
        """One ``store.rejected`` event per session; True if any went in."""
        by_session: dict[str | None, list[Rejected]] = {}
        for r in rejected:
            by_session.setdefault(r.session_id, []).append(r)
        wrote = False
        for sid, rows in by_session.items():
            data = {"rows": [{"kind": r.kind, "id": r.id, "message_id": r.message_id,
                              "reason": r.reason} for r in rows]}
            for owner in dict.fromkeys((sid, None)):  # a session that is gone: no owner
                try:
                    if not self._write([PutEvent(Event(session_id=owner, type="store.rejected",
                                                       data=data))]):
                        continue
                except Exception as exc:
                    if unavailable(exc):
                        raise _Halt(exc) from exc
                    continue
                wrote = True
                break
        return wrote

    # -- marking the messages that lost a row ----------------------------------------------

    def _amended(self, ops: list[Op]) -> list[Op]:
        """Ops with the rows of damaged messages marked (what was lost, and for a finished
        message its error)."""
        if not self._damaged:
            return ops
        return [PutMessage(marked(op.message, self._damaged[op.message.id]))
                if isinstance(op, PutMessage) and op.message.id in self._damaged else op
                for op in ops]

    def _settled(self, ops: list[Op]) -> None:
        """A damaged message whose final row is written needs no more marking."""
        if self._damaged:
            for op in ops:
                if isinstance(op, PutMessage) and op.message.is_terminal:
                    if self._damaged.pop(op.message.id, None) is not None:
                        self._finished_marked[op.message.id] = op.message
                        while len(self._finished_marked) > _FINISHED_MARKED_KEPT:
                            del self._finished_marked[next(iter(self._finished_marked))]

    def as_stored(self, message: Message) -> Message:
        """``message`` as its final row was written: marked (status, error, what was lost)
        when the store refused one of its rows; else ``message`` itself."""
        stored = self._finished_marked.pop(message.id, None)
        if stored is None:
            return message
        return stored.model_copy(update={"parts": message.parts})
