"""Stopping a child that leads its own process group (a person's shell command, an MCP
server): SIGTERM to the whole group, then SIGKILL, so no grandchild outlives it."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Awaitable, Callable


async def stop_group(pid: int, kill: Callable[[], None],
                     exited: Callable[[float], Awaitable[bool]], grace: float) -> None:
    """SIGTERM then SIGKILL to the group ``pid`` leads, each followed by up to ``grace``
    seconds of ``exited(grace)``; ``kill`` where there are no process groups (Windows)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if sys.platform != "win32":
                os.killpg(pid, sig)
            else:  # pragma: no cover
                kill()
        if await exited(grace):
            return
