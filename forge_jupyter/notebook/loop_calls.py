"""Calls scheduled from any thread onto the kernel's event loop, in the cell's context.

The live view is fed from the bus, whose events come from the loop and from worker threads
(tools, the store's flushes); its timers (the next flush, the ready check) must run on the loop,
in the context of the cell that started the turn, so that what they print lands in that cell.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable
from typing import Any


class Later:
    """A cancellable scheduled call (a loop handle or a timer thread, once armed)."""

    def __init__(self) -> None:
        self.cancelled = False
        self.handle: Any = None

    def cancel(self) -> None:
        self.cancelled = True
        if self.handle is not None:
            self.handle.cancel()


def call_later(loop: asyncio.AbstractEventLoop | None, context: contextvars.Context | None,
               delay: float, fn: Callable[..., Any], *args: Any) -> Later:
    """Run ``fn(*args)`` after ``delay`` seconds on ``loop`` (from any thread) in ``context``;
    on a timer thread when there is no loop (a script)."""
    later = Later()
    ctx = (context or contextvars.copy_context()).copy()
    if loop is not None and not loop.is_closed():
        def arm() -> None:
            if not later.cancelled:
                later.handle = loop.call_later(delay, fn, *args, context=ctx.copy())

        try:
            loop.call_soon_threadsafe(arm, context=ctx)
            return later
        except RuntimeError:  # the loop closed meanwhile
            pass
    timer = threading.Timer(delay, lambda: ctx.run(fn, *args))
    timer.daemon = True
    later.handle = timer
    timer.start()
    return later
