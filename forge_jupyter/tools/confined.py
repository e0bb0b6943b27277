"""Run a function in a thread the operating system forbids to write files (Linux Landlock).

The ``sql`` tool's DuckDB connection already refuses every path but the files a query reads,
and the statement check refuses anything that writes. One gap is left inside DuckDB itself: a
file it may read, it may also overwrite (``COPY … TO 'that file' (USE_TMP_FILE false)``),
should a writing statement ever get past the check. Landlock (Linux 5.13+) closes it below
DuckDB: a thread that restricts itself — and every thread it starts, DuckDB's workers
included — can no longer open a file for writing, truncate one, or create, remove, rename or
link anything, anywhere. Reading is untouched. The restriction cannot be lifted, so it is
applied to a fresh thread that ends with the call, never to a pooled one.

Where Landlock is missing (another OS, an older kernel, a sandbox that blocks the syscalls)
``confined`` runs the function unrestricted and says so: the DuckDB layers still hold.
"""

from __future__ import annotations

import ctypes
import os
import platform
import sys
from collections.abc import Callable
from typing import Any, TypeVar

from .threads import Stop, run_in_tool_thread

T = TypeVar("T")

_CREATE_RULESET, _RESTRICT_SELF = 444, 446  # the generic syscall table's (all but alpha)
_PR_SET_NO_NEW_PRIVS = 38
_VERSION = 1 << 0  # landlock_create_ruleset flag: ask for the ABI version
# Filesystem accesses that change something, by the ABI version that introduced them.
_WRITES = {
    1: (1 << 1) | (1 << 4) | (1 << 5) | (1 << 6) | (1 << 7) | (1 << 8) | (1 << 9)
       | (1 << 10) | (1 << 11) | (1 << 12),  # write, remove dir/file, make char/dir/reg/…
    2: 1 << 13,  # refer: link or rename into another directory
    3: 1 << 14,  # truncate
}


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64)]


def _libc() -> Any:
    return ctypes.CDLL(None, use_errno=True)


def abi_version() -> int:
    """Landlock's ABI version on this machine; 0 where there is none."""
    if not sys.platform.startswith("linux") or platform.machine().startswith("alpha"):
        return 0
    try:
        version = _libc().syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), _VERSION)
    except (OSError, AttributeError):
        return 0
    return max(int(version), 0)


def forbid_writes() -> bool:
    """Forbid the calling thread (and the threads it starts) to write any file; True if done."""
    version = abi_version()
    if version < 1:
        return False
    libc = _libc()
    handled = 0
    for since, bits in _WRITES.items():
        if version >= since:
            handled |= bits
    attr = _RulesetAttr(handled)
    ruleset = libc.syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)),
                           0)
    if ruleset < 0:
        return False
    try:
        # required to restrict oneself without privileges; inherited, and only ever tightens
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return False
        return libc.syscall(_RESTRICT_SELF, ruleset, 0) == 0
    finally:
        os.close(ruleset)


async def confined(fn: Callable[..., T], *args: Any, stop: Stop | None = None
                   ) -> tuple[T, bool]:
    """(``fn(*args)``, whether writes were forbidden), run in a new tool thread
    (tools/threads.py) that cannot write files where Landlock allows it."""

    def target() -> tuple[T, bool]:
        forbidden = forbid_writes()
        return fn(*args), forbidden

    return await run_in_tool_thread(target, name="sql", stop=stop)
