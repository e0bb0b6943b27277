"""The connection to one MCP server: a stdio child process or a streamable-HTTP endpoint.

Why our own stdio transport rather than the SDK's ``stdio_client``: the SDK joins each chunk
of a line onto everything read so far (``buffer + chunk``), so one large message costs time
quadratic in its size — measured here (benchmarks/bench_mcp.py), one call returning 10, 20 and
40 MB took 4.8, 16 and 80 s through the SDK's client, 0.18, 0.56 and 0.81 s through this one;
100 MB takes 1.9 s here (peak memory 673 MB). This reader keeps a bytearray and scans only the
new bytes (linear), and parses with json.loads (pydantic's validate_json took 1.2 GB more on
the 211 MB line of a 100 MB result). It refuses a message over ``MAX_MESSAGE`` by stopping
the server, and keeps the process at hand: its pid for ``%forge mcp``, its exit code and its
stderr for the error the model and the person read.

Both transports signal ``closed`` when the server's side ends (the process exited, the HTTP
stream closed), so a call in flight fails at once as a crash instead of hanging.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import AsyncIterator
from typing import IO, TYPE_CHECKING, Any

import anyio
import mcp_types as types

if TYPE_CHECKING:  # the SDK's package imports its server and OpenTelemetry: only once one starts
    from mcp.shared.message import SessionMessage

from ..process_group import stop_group
from .config import ServerSpec

MAX_MESSAGE = 256 * 1024 * 1024  # bytes in one JSON-RPC line; a server sending more is stopped
_READ = 1 << 20
SAFE_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "TMPDIR",
            "VIRTUAL_ENV", "PYTHONPATH")  # the kernel's API keys are not passed on unless named


class Process:
    """The server's process as far as a person needs to know it."""

    def __init__(self) -> None:
        self.pid: int | None = None
        self.returncode: int | None = None
        self.too_big = False


def server_env(spec: ServerSpec) -> dict[str, str]:
    env = {k: os.environ[k] for k in SAFE_ENV if k in os.environ}
    return env | spec.env


@contextlib.asynccontextmanager
async def stdio_transport(spec: ServerSpec, errlog: IO[str], closed: anyio.Event,
                          proc: Process) -> AsyncIterator[tuple[Any, Any]]:
    """(read stream, write stream) of the server ``spec`` started as a child process."""
    process = await anyio.open_process([spec.command or "", *spec.args], env=server_env(spec),
                                       stderr=errlog, cwd=spec.cwd, start_new_session=True)
    proc.pid = process.pid
    from mcp.shared.message import SessionMessage

    read_send, read_recv = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_send, write_recv = anyio.create_memory_object_stream[SessionMessage](0)

    async def reader() -> None:
        buf, scan = bytearray(), 0
        try:
            while True:
                buf += await process.stdout.receive(_READ)  # type: ignore[union-attr]
                start = 0
                if len(buf) > _READ and buf.find(b"\n", scan) == len(buf) - 1:
                    # One large message and nothing after it: parse the buffer itself, no copy.
                    line, buf, scan = buf, bytearray(), 0
                    del line[-1:]
                    await read_send.send(_parse(line))
                    continue
                while (nl := buf.find(b"\n", scan)) != -1:
                    line, scan = bytes(buf[start:nl]), nl + 1
                    start = scan
                    if line.strip():
                        await read_send.send(_parse(line))
                del buf[:start]
                scan = len(buf)
                if len(buf) > MAX_MESSAGE:
                    proc.too_big = True
                    return
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass
        finally:  # the end is known before the session sees its stream close
            closed.set()
            read_send.close()

    async def writer() -> None:
        try:
            async with write_recv:
                async for message in write_recv:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send((data + "\n").encode())  # type: ignore[union-attr]
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            closed.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(reader)
        tg.start_soon(writer)
        try:
            yield read_recv, write_send
        finally:
            with anyio.CancelScope(shield=True):
                await stop_process(process)
                proc.returncode = process.returncode
            tg.cancel_scope.cancel()


def _parse(line: bytes | bytearray) -> SessionMessage | Exception:
    # json.loads, then validation: pydantic's validate_json took 1.2 GB more to parse a 211 MB
    # line (a 100 MB tool result, which the SDK's servers send twice: text and structured).
    from mcp.shared.message import SessionMessage

    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_python(json.loads(line),
                                                                            by_name=False))
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, ValidationError
        return exc


async def stop_process(process: Any, grace: float = 2.0) -> None:
    """Close stdin (the spec's polite stop), then SIGTERM and SIGKILL to its process group."""
    with contextlib.suppress(Exception):
        await process.stdin.aclose()
    if await _exited(process, grace):
        return
    await stop_group(process.pid, process.kill, lambda t: _exited(process, t), grace)


async def _exited(process: Any, timeout: float) -> bool:
    with anyio.move_on_after(timeout):
        while process.returncode is None:
            await anyio.sleep(0.02)
    return process.returncode is not None


@contextlib.asynccontextmanager
async def http_transport(spec: ServerSpec, closed: anyio.Event) -> AsyncIterator[tuple[Any, Any]]:
    """(read stream, write stream) of the streamable-HTTP server at ``spec.url``."""
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async with create_mcp_http_client(headers=dict(spec.headers)) as http:
        async with streamable_http_client(spec.url or "", http_client=http) as (read, write):
            send, recv = anyio.create_memory_object_stream[Any](0)

            async def relay() -> None:
                try:
                    async for item in read:
                        await send.send(item)
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    pass
                finally:
                    closed.set()
                    send.close()

            async with anyio.create_task_group() as tg:
                tg.start_soon(relay)
                try:
                    yield recv, write
                finally:
                    tg.cancel_scope.cancel()
