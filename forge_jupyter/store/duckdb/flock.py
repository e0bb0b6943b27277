"""The queue lock of a DuckDB store: an exclusive ``flock`` on ``<file>.lock``, so forge's
processes wait their turn in the kernel instead of spinning on DuckDB's lock errors."""

from __future__ import annotations

import fcntl
import os
import threading
import time
from contextlib import suppress
from pathlib import Path

from ...errors import StoreLocked


class _FlockWait:
    """A blocking ``flock`` in a helper thread, so that the wait can be bounded.

    The helper owns the descriptor until ``wait`` returns True; when the caller gives up
    (timeout, KeyboardInterrupt) the helper closes it as soon as its ``flock`` returns.
    """

    def __init__(self, fd: int):
        self.fd = fd
        self.got = threading.Event()
        self.cancelled = False
        self.guard = threading.Lock()
        threading.Thread(target=self._wait, name="forge-store-flock", daemon=True).start()

    def _wait(self) -> None:
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        except OSError:
            pass
        with self.guard:
            if self.cancelled:  # the caller gave up: let the next process have it
                os.close(self.fd)
            else:
                self.got.set()

    def wait(self, timeout: float) -> bool:
        try:
            if self.got.wait(max(0.0, timeout)):
                return True
        except BaseException:
            self._give_up()
            raise
        return not self._give_up()

    def _give_up(self) -> bool:
        """True when the caller gave up in time; False when the lock came through after all."""
        with self.guard:
            if self.got.is_set():
                return False
            self.cancelled = True
            return True


class QueueLock:
    """This process's place in the queue for one file; ``take`` blocks (bounded), ``release``."""

    def __init__(self, path: Path, lock_path: Path) -> None:
        self.path = path
        self.lock_path = lock_path
        self._fd: int | None = None

    def take(self, deadline: float, timeout: float) -> None:
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            # queue in the kernel behind the holder; from here on the waiter owns ``fd``
            if not _FlockWait(fd).wait(deadline - time.monotonic()):
                raise StoreLocked(
                    f"{self.path} stayed locked by another forge-jupyter process "
                    f"({self._holder()}) for {timeout:g} s; it may be running a long read or "
                    "be stuck. Wait and retry, stop that process, or give the store a longer "
                    "lock_timeout."
                ) from None
        except BaseException:
            os.close(fd)
            raise
        # who holds the queue, for the message of whoever times out waiting behind us
        with suppress(OSError):  # fixed width: no truncate needed
            os.pwrite(fd, f"pid {os.getpid():<12}\n".encode(), 0)
        self._fd = fd

    def _holder(self) -> str:
        try:
            return self.lock_path.read_text().strip() or "pid unknown"
        except OSError:
            return "pid unknown"

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            with suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
