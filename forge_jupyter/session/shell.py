"""``session.shell("cmd")``: the person runs a shell command, and the session remembers it
(the SDK's ``shell`` entry).

The command runs in the session's root directory as the person — no approval is asked: the
person typed it, the model did not — with ``/bin/sh -c``, no standard input, and a timeout
(``Forge.shell_timeout``, default 60 s) after which its whole process group is stopped
(SIGTERM, then SIGKILL). Its output (stdout and stderr together) is scrubbed of secrets and
cut to the global tool limit as it streams (tools/truncate.py; the full output is saved in the
session's output folder), and recorded as a synthetic user message holding one ``shell`` tool
part — command, exit code, output — written through the write entry under the session's
runner lease, as any turn is. The model reads it at its next turn (llm/request.py).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
from dataclasses import dataclass
from typing import Any

from ..errors import SessionBusy, positive_number
from ..ids import new_id
from ..message import Message, ToolPart, now
from ..process_group import stop_group
from ..scrub import Scrubber, secret_params, valid_text
from ..tools.truncate import BoundedOutput
from . import runner
from .host import SessionHandle
from .prompt import _give_back, _take_runner
from .writer import Writer

TOOL = "shell"
_READ = 1 << 16
_GRACE = 2.0  # seconds between SIGTERM and SIGKILL


@dataclass(frozen=True)
class ShellResult:
    """What the person sees of a command they ran (and the model reads next turn)."""

    command: str
    exit_code: int | None  # None: stopped at the timeout
    output: str  # scrubbed, cut to the tool limit
    timed_out: bool
    seconds: float
    message_id: str | None  # the record in the session

    def __str__(self) -> str:
        return f"$ {self.command}\n{self.output.rstrip()}\n[{status(self)}]"

    __repr__ = __str__

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(str(self))


def status(r: ShellResult) -> str:
    if r.timed_out:
        return (f"stopped after {r.seconds:.0f} s: the command did not finish within the "
                "timeout (Forge.shell_timeout); its process group was killed")
    return f"exit code {r.exit_code}"


async def shell_async(session: SessionHandle, command: str, *,
                      timeout: float | None = None) -> ShellResult:
    command = valid_text(command).strip()
    if not command:
        raise ValueError("give a command to run, e.g. session.shell('ls -la')")
    forge = session.forge
    store = forge.services.store
    if runner.current(id(store), session.id) is not None:  # refused before it runs
        raise SessionBusy(f"session {session.id} is answering a prompt; run the command when it "
                          "has finished (or stop it with %forge stop), so the record lands "
                          "between turns.")
    limit = positive_number(forge.shell_timeout if timeout is None
                            else timeout, "timeout", "Give the seconds the command may run, "
                            "e.g. session.shell('make test', timeout=600).")
    root = session.info.directory or os.getcwd()
    scrubber = Scrubber.from_environment(extra=secret_params(forge.litellm_kwargs))
    part_id = new_id("part")
    out = BoundedOutput(forge.output_dir(session.id), part_id, scrubber=scrubber)
    started = now()
    code, timed_out = await _run(command, root, limit, out)
    seconds = now() - started
    shown = out.result()
    result = ShellResult(command, code, shown.text, timed_out, seconds, None)
    text = shown.text.rstrip() + f"\n[{status(result)}]"
    message_id = await _record(session, scrubber, part_id, command, root, text, code, timed_out,
                               shown.saved_path, started)
    return ShellResult(scrubber(command) or "", code, scrubber(shown.text) or "", timed_out,
                       seconds, message_id)


async def _run(command: str, cwd: str, limit: float, out: BoundedOutput) -> tuple[int | None, bool]:
    """Run ``command``; (exit code, timed out). Output goes to ``out`` as it comes."""
    proc = await asyncio.create_subprocess_shell(
        command, cwd=cwd, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT, start_new_session=True)  # its own group: killable whole
    decoder = codecs.getincrementaldecoder("utf-8")("replace")

    async def read() -> None:
        assert proc.stdout is not None
        while chunk := await proc.stdout.read(_READ):
            out.write(decoder.decode(chunk))
        out.write(decoder.decode(b"", final=True))

    reader = asyncio.ensure_future(read())
    try:
        await asyncio.wait_for(asyncio.shield(reader), limit)
        return await proc.wait(), False
    except TimeoutError:
        await _stop(proc)
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reader
        return None, True
    except BaseException:  # cancelled (the cell was interrupted): leave nothing running
        await _stop(proc)
        reader.cancel()
        raise


async def _stop(proc: asyncio.subprocess.Process) -> None:
    async def exited(timeout: float) -> bool:
        try:
            await asyncio.wait_for(proc.wait(), timeout)
        except TimeoutError:
            return False
        return True

    await stop_group(proc.pid, proc.kill, exited, _GRACE)


async def _record(session: SessionHandle, scrubber: Scrubber, part_id: str, command: str,
                  root: str, text: str, code: int | None, timed_out: bool, saved: str | None,
                  started: float) -> str:
    """Write the record under the session's runner lease (as a prompt writes its turn)."""
    forge = session.forge
    store = forge.services.store
    sid = session.id
    run = runner.claim(id(store), sid)
    leased, writer = False, None
    try:
        await forge.flush_async()
        leased, held, _recovered, view = await asyncio.to_thread(_take_runner, store, sid,
                                                                 run.owner)
        if not leased:
            owner, expires = held or ("another process", now())
            raise SessionBusy(runner.busy_message(sid, owner, expires))
        writer = Writer(forge.services.projection, forge.services.bus, scrubber)
        writer.hold_lease(sid, run.owner)
        writer.adopt(view)
        info = session.info
        message = Message(session_id=sid, role="user", status="completed",
                          agent=info.agent or "build", model=info.model, completed_at=now(),
                          metadata={"shell": True})
        part = ToolPart(id=part_id, session_id=sid, message_id=message.id, call_id=part_id,
                        tool=TOOL, input={"command": command, "directory": root},
                        metadata={"by": "person", "exit_code": code, "timed_out": timed_out,
                                  **({"truncated": {"saved": saved}} if saved else {})})
        part.start(at=started).complete(text, title=f"$ {command}"[:120])
        message.parts = [part]
        writer.update_message(message)
        writer.append(sid, message.id)
        return message.id
    finally:
        try:  # the record lands now, or this says why not
            await asyncio.to_thread(_give_back, store, sid, writer, run.owner if leased else None)
        finally:
            runner.release(id(store), sid)
