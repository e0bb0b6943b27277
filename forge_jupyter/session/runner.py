"""One runner per session: a claim inside this process, a lease with expiry across processes.

A second prompt on a busy session is refused at once with ``SessionBusy`` (it never waits
and never interleaves): in a notebook a blocked cell is worse than a clear message, and the
person can wait for the run or stop it (``session.abort()``).
"""

from __future__ import annotations

import asyncio
import os
import socket
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from ..errors import SessionBusy

LEASE_TTL = 60.0  # seconds; renewed every third of it while a run is alive
OWNER = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


@dataclass
class Run:
    session_id: str
    started_at: float = field(default_factory=time.time)
    loop: asyncio.AbstractEventLoop | None = None
    task: asyncio.Task | None = None
    ctx: Any = None  # the RunContext, once built
    abort_requested: bool = False

    def abort(self) -> bool:
        """Cancel the run's task from any thread; True if there was one to cancel."""
        self.abort_requested = True
        if self.ctx is not None:
            self.ctx.aborted = True
        if self.loop is None or self.task is None or self.task.done():
            return False
        self.loop.call_soon_threadsafe(self.task.cancel)
        return True


_runs: dict[tuple[int, str], Run] = {}
_runs_lock = threading.Lock()


def claim(store_key: int, session_id: str) -> Run:
    with _runs_lock:
        current = _runs.get((store_key, session_id))
        if current is not None:
            age = time.time() - current.started_at
            raise SessionBusy(
                f"session {session_id} is already answering a prompt (started {age:.0f} s ago). "
                "Wait for it to finish, or stop it with session.abort() (%forge stop)."
            )
        run = _runs[(store_key, session_id)] = Run(session_id)
        return run


def release(store_key: int, session_id: str) -> None:
    with _runs_lock:
        _runs.pop((store_key, session_id), None)


def current(store_key: int, session_id: str) -> Run | None:
    with _runs_lock:
        return _runs.get((store_key, session_id))


def busy_message(session_id: str, owner: str, expires: float) -> str:
    return (
        f"session {session_id} is being run by another process ({owner}); its lease expires in "
        f"{max(0, expires - time.time()):.0f} s. Wait for that run to end, or use another session."
    )
