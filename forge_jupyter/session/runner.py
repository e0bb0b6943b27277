"""One runner per session: a claim inside this process, a lease with expiry across processes.

A second prompt on a busy session is refused at once with ``SessionBusy`` (it never waits
and never interleaves): in a notebook a blocked cell is worse than a clear message, and the
person can wait for the run or stop it (``session.abort()``).

A lease names its holder: ``host:pid:start:place:token`` (``start``: the process's start time
in clock ticks, so a reused pid is told apart; ``place``: the boot and pid namespace, so a
container sharing the host name is another host; ``token``: the run). On the same host and
place a lease whose process is gone (or a zombie, or its pid now another process's) is taken
over at once (``stale_reason``); a lease from anywhere else waits for its expiry.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import socket
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import SessionBusy
from ..tools.nested import refuse_nested

LEASE_TTL = 60.0  # seconds; renewed every third of it while a run is alive


@dataclass(frozen=True)
class Owner:
    """Who holds a lease, parsed from its string form."""

    host: str
    pid: int
    start: int  # clock ticks after boot (/proc/<pid>/stat field 22); 0 where unknown
    place: str  # boot id + pid namespace, hashed; "-" where unknown
    token: str

    def __str__(self) -> str:
        return f"{self.host}:{self.pid}:{self.start}:{self.place}:{self.token}"

    @classmethod
    def parse(cls, text: str) -> Owner | None:
        """The owner a lease string names, or None when it is not in this form (an owner from
        another version or program: its lease waits for expiry)."""
        bits = text.rsplit(":", 4)
        if len(bits) != 5 or not bits[1].isdigit() or not bits[2].isdigit() or not bits[0]:
            return None
        return cls(bits[0], int(bits[1]), int(bits[2]), bits[3], bits[4])


def _proc_stat(pid: int) -> tuple[str, int] | None:
    """(state letter, start time in ticks) of a process from /proc, or None if there is none."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    fields = raw[raw.rindex(b")") + 2 :].split()  # the command name may hold spaces and ')'
    return fields[0].decode(), int(fields[19])


def _place() -> str:
    """Pids compare only inside one boot and one pid namespace: a short digest of both."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        namespace = os.readlink("/proc/self/ns/pid")
    except OSError:
        return "-"
    return hashlib.sha1(f"{boot}|{namespace}".encode()).hexdigest()[:10]


def new_owner() -> str:
    """A lease owner for one run of this process (computed now: a forked child is itself)."""
    pid = os.getpid()
    stat = _proc_stat(pid)
    return str(Owner(socket.gethostname(), pid, stat[1] if stat else 0, _place(),
                     uuid.uuid4().hex[:8]))


def stale_reason(owner: str) -> str | None:
    """Why the holder of a lease cannot be running any more, or None when it may be (or this
    process cannot tell: another host or namespace, an owner string of another form)."""
    held = Owner.parse(owner)
    if held is None or held.host != socket.gethostname() or held.place != _place():
        return None
    if held.pid == os.getpid():
        me = _proc_stat(held.pid)
        if held.start and me is not None and me[1] != held.start:
            return f"pid {held.pid} belonged to an earlier process"
        with _runs_lock:
            if any(run.owner == owner for run in _runs.values()):
                return None
        return "no run of this process holds it any more"
    stat = _proc_stat(held.pid)
    if stat is None:
        try:
            os.kill(held.pid, 0)  # no /proc entry: ask the kernel directly
        except ProcessLookupError:
            return f"process {held.pid} is not running"
        except PermissionError:
            return None  # alive, another user's
        return None
    state, start = stat
    if state in ("Z", "X"):
        return f"process {held.pid} has exited"
    if held.start and start != held.start:
        return f"pid {held.pid} now belongs to another process"
    return None


@dataclass
class Run:
    session_id: str
    started_at: float = field(default_factory=time.time)
    loop: asyncio.AbstractEventLoop | None = None
    task: asyncio.Task | None = None
    ctx: Any = None  # the RunContext, once built
    abort_requested: bool = False
    owner: str = field(default_factory=new_owner)  # the name its lease goes by

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
    refuse_nested()  # every prompt and compaction claims first: no turn from a tool's code
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
    held = Owner.parse(owner)
    if held is None:
        who = f"another process ({owner})"
    elif held.pid == os.getpid() and held.host == socket.gethostname():
        who = f"another run in this process ({owner})"
    else:
        who = f"process {held.pid} on {held.host} ({owner})"
    return (
        f"session {session_id} is being run by {who}; its lease expires in "
        f"{max(0, expires - time.time()):.0f} s. Wait for that run to end (a process that died "
        "on another machine frees it when the lease expires), or use another session."
    )


def lost_message(session_id: str, holder: str | None) -> str:
    """What a run that lost its session's lease to another runner tells the person."""
    who = f"another runner ({holder})" if holder else "another runner (which has let it go since)"
    return (
        f"This run lost session {session_id} to {who} and stopped: nothing it wrote after "
        "that was stored, and the model was not asked again. Continue the session from the "
        "kernel that holds it, or prompt again here once it is free."
    )
