"""One MCP server's life: start (lazily), list its tools, call them, notice a crash, stop.

Everything here runs on the supervisor's own event loop (supervisor.py). A connection is held
open by one long-lived task (anyio's task groups must be entered and left in one task); calls
are made beside it and raced against the server's end, so a crash mid-call is an error at
once, never a hang. Crashes are counted: a server that crashed (or failed to start) is started
again once on its next use; a second time it stays down until someone restarts it.
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
import time
from typing import Any, Literal

import anyio

from ..scrub import Scrubber
from .config import ServerSpec
from .transport import MAX_MESSAGE, Process, http_transport, stdio_transport

State = Literal["idle", "starting", "running", "crashed", "failed", "stopped", "untrusted",
                "disabled"]
MAX_TOOLS = 500  # tools one server may list; the rest are left out
MAX_PAGES = 50
STDERR_TAIL = 2000


class ServerError(Exception):
    """The server could not do what was asked (not running, crashed, refused to start)."""


class Connection:
    def __init__(self, spec: ServerSpec) -> None:
        self.spec = spec
        self.state: State = ("disabled" if spec.disabled else
                             "untrusted" if not spec.trusted else "idle")
        self.error: str | None = None
        self.tools: list[Any] = []  # mcp_types.Tool, as the server listed them
        self.rejected: list[str] = []  # listed tools that were not valid MCP tools
        self.starts = 0
        self.restarts_left = 1
        self.started_at: float | None = None
        self.proc = Process()
        self.client: Any = None
        self._done: asyncio.Event | None = None
        self._closed: anyio.Event | None = None  # set by the transport when the server's side ends
        self._stopping = False
        self._task: asyncio.Task | None = None
        self._lock: asyncio.Lock | None = None
        self._stderr: Any = None

    # -- starting ---------------------------------------------------------------------------

    async def ensure(self) -> None:
        """Running on return, else ServerError saying why (a crashed server restarts once)."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self.state == "running":
                return
            if self.state in ("untrusted", "disabled", "stopped", "failed"):
                raise ServerError(self.unavailable())
            if self.state == "crashed":
                if self.restarts_left <= 0:
                    self.state = "failed"
                    raise ServerError(self.unavailable())
                self.restarts_left -= 1
            await self._start()

    def unavailable(self) -> str:
        name = self.spec.name
        return {
            "untrusted": f"MCP server {name!r} comes from the project file {self.spec.source}, "
                         "which is not trusted yet (a project file can run any command). "
                         "Run %forge mcp trust (or forge.mcp.trust()) once you have read it.",
            "disabled": f"MCP server {name!r} is disabled in {self.spec.source}.",
            "stopped": f"MCP server {name!r} was stopped.",
            "failed": f"MCP server {name!r} failed twice and was not started again "
                      f"(last error: {self.error}). Fix it, then run %forge mcp restart {name}.",
        }.get(self.state, f"MCP server {name!r} is {self.state}.")

    async def _start(self) -> None:
        self.state, self.error, self.starts = "starting", None, self.starts + 1
        self.proc, self._stopping = Process(), False
        self._done = asyncio.Event()
        ready: asyncio.Future = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._serve(ready), name=f"mcp-{self.spec.name}")
        try:
            self.tools = await asyncio.wait_for(asyncio.shield(ready), self.spec.startup_timeout)
        except BaseException as exc:
            await self._halt(graceful=False)  # mid-handshake: nothing to wind down politely
            if isinstance(exc, asyncio.TimeoutError | TimeoutError):
                why = (f"it did not answer within {self.spec.startup_timeout:g} s "
                       "(startup_timeout in its configuration)")
            elif isinstance(exc, asyncio.CancelledError):
                self.state = "idle"  # the prompt was stopped: the next one starts it afresh
                raise
            else:
                why = describe(exc)
            self._crashed(f"could not start: {why}{self.stderr_tail()}")
            raise ServerError(f"MCP server {self.spec.name!r} {self.error}") from None
        self.state, self.started_at = "running", time.time()

    async def _serve(self, ready: asyncio.Future) -> None:
        """Hold the connection open until it is stopped or the server's side ends."""
        from mcp.client import Client

        closed = self._closed = anyio.Event()
        self._stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
        if self.spec.transport == "stdio":
            transport = stdio_transport(self.spec, self._stderr, closed, self.proc)
        else:
            transport = http_transport(self.spec, closed)
        try:
            async with Client(transport, mode="legacy", cache=None) as client:
                tools = await self._list(client)
                self.client = client
                ready.set_result(tools)
                waiter = asyncio.ensure_future(closed.wait())
                stop = asyncio.ensure_future(self._done.wait())  # type: ignore[union-attr]
                try:
                    await asyncio.wait({waiter, stop}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    waiter.cancel()
                    stop.cancel()
        except BaseException as exc:  # the transport's own teardown errors included
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else ServerError(repr(exc)))
            if not isinstance(exc, Exception):
                raise
        finally:
            self.client = None
            if self._done is not None:
                self._done.set()
            if not self._stopping and self.state == "running":
                self._crashed(self._end_reason())

    async def _list(self, client: Any) -> list[Any]:
        """The server's tools, each validated on its own: the SDK's ``list_tools`` refuses the
        whole listing for one malformed tool; here that tool alone is left out (and said)."""
        import mcp_types as types
        from pydantic import ValidationError

        session = client.session
        tools: list[Any] = []
        self.rejected = []
        cursor = None
        for _ in range(MAX_PAGES):
            raw = await raw_request(session, "tools/list", {"cursor": cursor} if cursor else {})
            items = raw.get("tools") if isinstance(raw, dict) else None
            for item in items if isinstance(items, list) else []:
                try:
                    tools.append(types.Tool.model_validate(item, by_name=False))
                except ValidationError as exc:
                    name = item.get("name") if isinstance(item, dict) else None
                    first = exc.errors()[0]
                    where = ".".join(str(x) for x in first.get("loc", ()))
                    self.rejected.append(f"{str(name)[:64]!r}: not a valid MCP tool ({where}: "
                                         f"{first.get('msg', '')[:120]})")
            cursor = raw.get("nextCursor") if isinstance(raw, dict) else None
            if not isinstance(cursor, str) or len(tools) >= MAX_TOOLS:
                break
        return tools[:MAX_TOOLS]

    def _end_reason(self) -> str:
        if self.proc.too_big:
            return f"sent a message over {MAX_MESSAGE // (1 << 20)} MB and was stopped"
        if self.spec.transport == "http":
            return "its HTTP connection closed"
        code = self.proc.returncode
        return "exited" + (f" with code {code}" if code is not None else "") + self.stderr_tail()

    def _crashed(self, why: str) -> None:
        self.error = why
        self.state = "crashed" if self.restarts_left > 0 else "failed"

    def stderr_tail(self) -> str:
        try:
            self._stderr.flush()
            self._stderr.seek(0, 2)
            size = self._stderr.tell()
            self._stderr.seek(max(0, size - STDERR_TAIL))
            tail = self._stderr.read().strip()
        except Exception:
            return ""
        # Scrubbed here, where it is read: it becomes the error %forge mcp shows and a notice.
        tail = Scrubber.from_environment()(tail[-STDERR_TAIL:]) or ""
        return f"; its last words on stderr: {tail}" if tail else ""

    # -- calling ----------------------------------------------------------------------------

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        """The server's CallToolResult; ServerError when it is down or dies during the call."""
        await self.ensure()
        client, done = self.client, self._done
        if client is None or done is None:
            raise ServerError(f"MCP server {self.spec.name!r} is not running ({self.error}).")
        call = asyncio.ensure_future(_call_tool(client, tool, arguments))
        ended = asyncio.ensure_future(done.wait())
        try:
            await asyncio.wait({call, ended}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            ended.cancel()
            if not call.done():
                call.cancel()
                with contextlib.suppress(BaseException):
                    await asyncio.wait({call}, timeout=2)
        if call.done() and not call.cancelled() and call.exception() is None:
            return call.result()
        if (done.is_set() or (self._closed is not None and self._closed.is_set())) \
                and not self._stopping:
            await self._wait_end()
            raise ServerError(f"MCP server {self.spec.name!r} crashed during the call "
                              f"({self.error}). It will be started again on its next use "
                              f"(once).") from None
        exc = call.exception() if call.done() and not call.cancelled() else None
        raise ServerError(f"MCP server {self.spec.name!r}: {describe(exc)}") from None

    async def _wait_end(self) -> None:
        """Let the serving task finish (the exit code and the state land)."""
        if self._task is not None:
            with contextlib.suppress(BaseException):
                await asyncio.wait({self._task}, timeout=6)

    # -- stopping ---------------------------------------------------------------------------

    async def _halt(self, graceful: bool = True) -> None:
        self._stopping = True
        if self._done is not None:
            self._done.set()
        if self._task is not None and not self._task.done():
            _, pending = await asyncio.wait({self._task}, timeout=6 if graceful else 0)
            if pending:
                self._task.cancel()
                await asyncio.wait({self._task}, timeout=3)

    async def stop(self) -> None:
        await self._halt()
        if self.state in ("running", "starting", "crashed", "idle"):
            self.state = "stopped"
        if self._stderr is not None:
            with contextlib.suppress(Exception):
                self._stderr.close()

    def reset(self) -> None:
        """Forget crashes: the next use starts the server again (``%forge mcp restart``)."""
        if self.spec.disabled:
            return
        self.state = "idle" if self.spec.trusted else "untrusted"
        self.restarts_left, self.error = 1, None


async def raw_request(session: Any, method: str, params: dict[str, Any]) -> Any:
    """A request's raw result through the session's dispatcher (the SDK's private layer under
    ``send_request``, pinned by mcp<3). Why not the public calls: ``list_tools`` refuses a whole
    listing for one malformed tool; ``call_tool`` re-lists the tools strictly to check
    structured output (which this client does not read)."""
    data: dict[str, Any] = {"method": method, "params": params}
    opts: dict[str, Any] = {}
    session._stamp(data, opts)  # the protocol-version header, as the SDK sends it
    return await session._dispatcher.send_raw_request(method, data["params"], opts)


async def _call_tool(client: Any, tool: str, arguments: dict[str, Any]) -> Any:
    """tools/call, its result validated as a CallToolResult (the text shared, not copied)."""
    import mcp_types as types

    raw = await raw_request(client.session, "tools/call", {"name": tool, "arguments": arguments})
    return types.CallToolResult.model_validate(raw, by_name=False)


def describe(exc: BaseException | None) -> str:
    """An exception as a person reads it (an exception group: its first real error)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if exc is None:
        return "the call ended without a result"
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
