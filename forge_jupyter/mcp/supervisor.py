"""The MCP supervisor: one Forge's servers, on an event loop of their own.

Why a loop of its own and not the kernel's: a synchronous ``session.prompt()`` in a notebook
runs its turn in a helper thread while the kernel's loop waits for it (session/prompt.py
``run_sync``); a server connection bound to the kernel's loop could then never be served — a
deadlock. So the supervisor runs its own loop in a daemon thread, started with the first
server, and every caller (the kernel's loop, a helper thread's, a script's) hands it work with
``run_coroutine_threadsafe`` and awaits the answer on its own loop. Cancelling the caller (a
tool timeout, the stop button) cancels the call on the supervisor's loop too.

Servers are stopped by ``Forge.close()`` and, for whatever is still open, when the process
exits (``atexit``: a kernel shut down by Jupyter exits normally) — so no server outlives its
kernel. A kernel killed outright closes the servers' stdin, and servers exit on that by the
protocol; each runs in its own process group, which the stop signals whole.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import threading
import weakref
from collections.abc import Coroutine
from typing import Any

from .config import ServerSpec
from .connection import Connection, ServerError

_live: weakref.WeakSet[Supervisor] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:  # the kernel is exiting: stop every server still running
    for sup in list(_live):
        sup.close()


class Supervisor:
    def __init__(self, specs: dict[str, ServerSpec]) -> None:
        self.connections = {name: Connection(spec) for name, spec in specs.items()}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.closed = False

    # -- the loop -----------------------------------------------------------------------------

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self.closed:
                raise ServerError("the MCP servers of this Forge were shut down (Forge.close()).")
            if self._loop is None:
                loop = asyncio.new_event_loop()
                self._thread = threading.Thread(target=loop.run_forever, name="forge-mcp",
                                                daemon=True)
                self._thread.start()
                self._loop = loop
                _live.add(self)
            return self._loop

    def submit(self, coro: Coroutine[Any, Any, Any]) -> concurrent.futures.Future:
        return asyncio.run_coroutine_threadsafe(coro, self._ensure_loop())

    async def run(self, coro: Coroutine[Any, Any, Any]) -> Any:
        """Run ``coro`` on the supervisor's loop and await it from the caller's loop."""
        return await asyncio.wrap_future(self.submit(coro))

    # -- what callers ask ---------------------------------------------------------------------

    async def start_all(self) -> list[str]:
        """Start every server that should run and is not running; why the others did not."""
        wanted = [c for c in self.connections.values() if c.state in ("idle", "crashed")]
        if not wanted:
            return []

        async def start(c: Connection) -> str | None:
            try:
                await c.ensure()
            except ServerError as exc:
                return str(exc)
            return None

        async def start_them() -> list[str | None]:
            return await asyncio.gather(*(start(c) for c in wanted))

        results = await self.run(start_them())
        return [r for r in results if r]

    async def call(self, server: str, tool: str, arguments: dict[str, Any]) -> Any:
        return await self.run(self.connections[server].call(tool, arguments))

    def restart(self, name: str, timeout: float = 90.0) -> None:
        """Stop ``name`` if running, forget its crashes, start it again now."""
        conn = self.connections[name]

        async def again() -> None:
            await conn.stop()
            conn.reset()
            await conn.ensure()

        self.submit(again()).result(timeout)

    def close(self, timeout: float = 8.0) -> None:
        """Stop every server (bounded: a server that ignores its stdin is killed)."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
            loop = self._loop
        _live.discard(self)
        if loop is None:
            return

        async def stop_all() -> None:
            await asyncio.gather(*(c.stop() for c in self.connections.values()),
                                 return_exceptions=True)

        try:
            asyncio.run_coroutine_threadsafe(stop_all(), loop).result(timeout)
        except Exception:  # a stuck stop must not keep the kernel from exiting
            pass
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(2)
            if not self._thread.is_alive():
                loop.close()
