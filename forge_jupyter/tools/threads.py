"""Where tools' blocking work runs: threads of forge's own, bounded, never the loop's executor.

A tool's work is untrusted in time: a custom tool may block forever, a query may run away.
Run in the event loop's default executor, such a thread holds one of its few workers for good
— six of them wedged the kernel, whose own writes and leases wait in that executor — and
``asyncio.run`` (a script's ``prompt()``) waits for every one of them before it returns.
So every tool's blocking work runs here instead:

- one fresh daemon thread per call (a thread that never returns must not hold a reusable
  worker, and Landlock's write ban, tools/confined.py, needs a thread of its own);
- at most ``MAX_RUNNING`` at once in the process; more calls wait their turn (the wait counts
  against their timeout);
- when the call ends early (its timeout, Stop) its ``Stop`` is set: the tool's ways to stop
  (``on_stop``: DuckDB's interrupt, an exception raised in the code) run, and the call waits a
  short grace for the thread to end. A thread still running then is *abandoned*: the call has
  ended, the thread keeps its slot until it returns. At ``MAX_ABANDONED`` such threads, new
  calls are refused with an error saying so, rather than piling up more.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar

from ..errors import ToolError

T = TypeVar("T")

MAX_RUNNING = 8  # tool threads alive at once, abandoned ones included
MAX_ABANDONED = 4  # stuck threads tolerated; at this many, new tool calls are refused
GRACE = 2.0  # seconds a stopped call waits for its thread to end before abandoning it


class Stop:
    """Set when the call a tool thread serves has ended (its timeout, Stop, an abort).

    A thread polls ``is_set()`` between steps; work blocked in C registers how to interrupt it
    with ``on_stop``. ``abandoned`` tells the caller the thread outlived the grace."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], Any]] = []
        self.abandoned = False

    def is_set(self) -> bool:
        return self._event.is_set()

    def on_stop(self, callback: Callable[[], Any]) -> Callable[[], None]:
        """Call ``callback`` when stopped (now, if already); returns its removal."""
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(callback)
                return lambda: self._discard(callback)
        callback()
        return lambda: None

    def _discard(self, callback: Callable[[], Any]) -> None:
        with self._lock, contextlib.suppress(ValueError):
            self._callbacks.remove(callback)

    def set(self) -> None:
        with self._lock:
            if self._event.is_set():
                return
            self._event.set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            with contextlib.suppress(Exception):  # a way to stop that fails: the grace decides
                callback()


class _Pool:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.alive = 0  # threads started and not yet returned
        self.abandoned: dict[int, str] = {}  # thread id → the tool it served
        self.waiters: deque[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = deque()

    def _refusal(self) -> ToolError | None:
        if len(self.abandoned) < MAX_ABANDONED:
            return None
        names = ", ".join(sorted(set(self.abandoned.values())))
        return ToolError(
            f"{len(self.abandoned)} earlier tool calls ({names}) are stuck in threads that did "
            "not stop when their calls ended, so no new tool call runs until one of them "
            "returns. Restart the kernel to free them; fix or give a timeout to what blocks.")

    async def _slot(self) -> None:
        """Wait for a free slot (counted in ``alive`` once granted)."""
        loop = asyncio.get_running_loop()
        while True:
            with self.lock:
                refused = self._refusal()
                if refused is not None:
                    raise refused
                if self.alive < MAX_RUNNING:
                    self.alive += 1
                    return
                granted: asyncio.Future[None] = loop.create_future()
                self.waiters.append((loop, granted))
            try:
                await granted
            except asyncio.CancelledError:
                with self.lock:
                    with contextlib.suppress(ValueError):
                        self.waiters.remove((loop, granted))
                raise
            # woken: a slot was freed; take it if still there (another caller may have won)

    def _release(self, ident: int, returned: list[bool]) -> None:
        with self.lock:
            returned.append(True)
            self.alive -= 1
            self.abandoned.pop(ident, None)
        self._wake_all()

    def _wake_all(self) -> None:
        """Every waiting caller checks again: a slot was freed, or the calls are refused now."""
        with self.lock:
            waiters = list(self.waiters)
            self.waiters.clear()
        for loop, granted in waiters:  # the losers wait once more
            with contextlib.suppress(RuntimeError):  # its loop closed: nobody waits there
                loop.call_soon_threadsafe(lambda g=granted: g.done() or g.set_result(None))

    async def run(self, fn: Callable[..., T], *args: Any, name: str, stop: Stop | None = None,
                  grace: float = GRACE) -> T:
        await self._slot()
        stop = stop or Stop()
        loop = asyncio.get_running_loop()
        done: asyncio.Future[T] = loop.create_future()
        # an abandoned thread's late failure is nobody's to raise: retrieved, never logged
        done.add_done_callback(lambda f: f.cancelled() or f.exception())
        context = contextvars.copy_context()  # like asyncio.to_thread: the caller's context
        returned: list[bool] = []  # non-empty once the thread gave its slot back

        def settle(setter: Callable[[Any], None], value: Any) -> None:
            if not done.done():
                setter(value)

        def target() -> None:
            try:
                outcome: tuple[Callable[[Any], None], Any] = \
                    (done.set_result, context.run(fn, *args))
            except BaseException as exc:  # handed to the awaiting task, raised there
                outcome = (done.set_exception, exc)
            finally:
                self._release(threading.get_ident(), returned)
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody waits
                loop.call_soon_threadsafe(settle, *outcome)

        thread = threading.Thread(target=target, name=f"forge-tool-{name}", daemon=True)
        try:
            thread.start()
        except BaseException:
            self._release(-1, returned)
            raise
        try:
            return await asyncio.shield(done)
        except asyncio.CancelledError:
            stop.set()
            deadline = loop.time() + grace
            with contextlib.suppress(BaseException):  # its outcome: nobody's to raise now
                await asyncio.wait_for(asyncio.shield(done), grace)
            with contextlib.suppress(BaseException):
                while thread.is_alive() and loop.time() < deadline:  # its last lines
                    await asyncio.sleep(0.005)
            with self.lock:
                if not returned and thread.ident is not None:
                    self.abandoned[thread.ident] = name
                    stop.abandoned = True
            if stop.abandoned:
                self._wake_all()  # waiting callers may be refused now
            raise

    def stuck(self) -> int:
        """How many abandoned tool threads are still running."""
        with self.lock:
            return len(self.abandoned)


_pool = _Pool()


async def run_in_tool_thread(fn: Callable[..., T], *args: Any, name: str,
                             stop: Stop | None = None, grace: float = GRACE) -> T:
    """``fn(*args)`` in a tool thread of its own; cancelled, it sets ``stop`` and waits up to
    ``grace`` seconds for the thread before abandoning it."""
    return await _pool.run(fn, *args, name=name, stop=stop, grace=grace)


def stuck_tool_threads() -> int:
    """Tool threads still running after their calls ended."""
    return _pool.stuck()
