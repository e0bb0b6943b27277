"""The projection's lease fences: which runs' rows go in only while they hold their lease.

A run registers its session and lease owner when it takes the lease (``fence``). From then on
every flush carrying rows of that session passes ``lease_owners`` to ``Store.write``, so they
go in only while the run still holds the lease — checked in the write's own transaction
(plan.py). A write refused with ``LeaseLost`` marks the session lost: its rows, buffered then
or later, are dropped and never written, the rest of the batch goes in, and the run is told
once (``on_lost``) so that it stops at once. The projection is shared by every session of a
Forge: a flush one run starts may carry, and so fence, another run's rows.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..errors import LeaseLost
from .base import Store
from .ops import AppendMessage, Op, PutEvent, PutMessage, PutPart

log = logging.getLogger(__name__)
OnLost = Callable[[LeaseLost], None]


def session_of(op: Op) -> str | None:
    """The session a buffered row belongs to (None: an event of no session)."""
    if isinstance(op, PutMessage):
        return op.message.session_id
    if isinstance(op, PutPart):
        return op.part.session_id
    if isinstance(op, AppendMessage):
        return op.session_id
    assert isinstance(op, PutEvent)
    return op.event.session_id


@dataclass(slots=True)
class _Fence:
    owner: str
    on_lost: OnLost | None
    lost: LeaseLost | None = None
    ended: bool = False  # the run is over; kept while rows of it still wait for a flush


class Fences:
    def __init__(self) -> None:
        self._by_session: dict[str, _Fence] = {}
        self._lock = threading.Lock()

    def fence(self, session_id: str, owner: str, on_lost: OnLost | None = None) -> None:
        with self._lock:
            self._by_session[session_id] = _Fence(owner, on_lost)

    def end(self, session_id: str, owner: str, *, keep: bool) -> None:
        """``owner``'s run is over; ``keep``: rows of it are still buffered (they stay
        fenced by its lease until a flush settles them)."""
        with self._lock:
            f = self._by_session.get(session_id)
            if f is None or f.owner != owner:
                return
            if keep and f.lost is None:
                f.ended = True
            else:
                del self._by_session[session_id]

    def settle(self, buffered: set[str | None]) -> None:
        """Forget the fences of runs that are over and have nothing buffered any more."""
        with self._lock:
            for sid in [s for s, f in self._by_session.items() if f.ended and s not in buffered]:
                del self._by_session[sid]

    def lost(self, session_id: str | None, owner: str | None = None) -> LeaseLost | None:
        """Why rows of this session are dropped (``owner``'s lease was lost), or None."""
        f = self._by_session.get(session_id) if session_id is not None else None
        if f is None or (owner is not None and f.owner != owner):
            return None
        return f.lost

    def owners(self, ops: Iterable[Op]) -> dict[str, str]:
        """{session: lease owner} for the fenced sessions among ``ops``."""
        wanted = {session_of(op) for op in ops}
        with self._lock:
            return {sid: f.owner for sid, f in self._by_session.items()
                    if sid in wanted and f.lost is None}

    def write(self, store: Store, ops: list[Op]) -> tuple[list[Op], int]:
        """``store.write(ops)``, fenced by the leases of the runs whose rows these are. A
        session whose lease was lost meanwhile: its rows are dropped (its run told) and the
        rest goes in. Returns the ops written and how many were dropped."""
        dropped = 0
        while ops:
            owners = self.owners(ops)
            try:
                if owners:
                    store.write(ops, lease_owners=owners)
                else:
                    store.write(ops)
                return ops, dropped
            except LeaseLost as error:
                lost = [sid for sid in error.session_ids if sid in owners]
                if not lost:
                    raise
                for sid in lost:
                    self.lose(sid, owners[sid], error)
                kept = [op for op in ops if session_of(op) not in lost]
                dropped += len(ops) - len(kept)
                ops = kept
        return ops, dropped

    def lose(self, session_id: str, owner: str, error: LeaseLost) -> None:
        """Mark ``owner``'s lease of the session lost and tell its run (once)."""
        with self._lock:
            f = self._by_session.get(session_id)
            if f is None or f.owner != owner or f.lost is not None:
                return
            f.lost = error
            tell = f.on_lost
        if tell is not None:
            try:
                tell(error)
            except Exception:  # telling the run must never undo a flush
                log.exception("on_lost callback failed")
