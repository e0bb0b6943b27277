"""One tool call of a model round, from its complete arguments to its final row (DESIGN §5).

Before it runs: a known tool, arguments that are JSON and fit the schema, no doom loop, the
permission gate — each refusal an error the model reads. Then its ``running`` row, arguments
included, is made durable (a crash mid-tool leaves the call findable), and the tool runs under
its timeout with its printed output and displays live on the bus; what the model and the store
get of the result is truncated and scrubbed (the full output saved on disk).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

from ..bus import DisplayData, ToolOutput
from ..errors import ToolError
from ..message import ToolPart
from ..scrub import StreamScrubber
from ..tools.base import Prepared, Tool, ToolContext
from ..tools.threads import MAX_ABANDONED
from ..tools.truncate import Truncated, truncate
from .context import RunContext
from .host import tool_fields
from .images import keep_images

MAX_CALLS_PER_STEP = 32
MAX_CONCURRENT_CALLS = 8


def _fail(ctx: RunContext, part: ToolPart, message: str, **meta: Any) -> None:
    ctx.writer.update_part(part.fail(message, **meta))


async def _checked(ctx: RunContext, part: ToolPart,
                   tools: dict[str, Tool]) -> tuple[Tool, Prepared | None] | None:
    """The tool to run and what its ``prepare`` found, or None when the call was refused (its
    error row written)."""
    tool = tools.get(part.tool)
    if tool is None:
        host = ctx.host
        known = host.services.registry.get(part.tool) if host is not None and part.tool else None
        # a flagged tool left out because its flag is off here (not one a rule denied): say why
        if known is not None and known.absent and known.flag not in host.flags:
            _fail(ctx, part, known.absent)
            return None
        available = ", ".join(sorted(tools)) or "none"
        name = part.tool or "(no name)"
        _fail(ctx, part, f"Unknown tool {name!r}. Available tools: {available}.")
        return None
    if part.raw_input is not None:
        _fail(ctx, part, f"The arguments for {part.tool} are not valid JSON: "
                         f"{part.raw_input[:200]!r}. Call the tool again with a JSON object.")
        return None
    problems = tool.validation_errors(part.input)
    if problems:  # jsonschema quotes the value: a 1 MB argument must not come back whole
        problems = [p if len(p) <= 300 else f"{p[:150]}…{p[-149:]}" for p in problems[:10]]
        _fail(ctx, part, f"Invalid arguments for {part.tool}: " + "; ".join(problems))
        return None
    signature = (part.tool, json.dumps(part.input, sort_keys=True))
    recent = ctx.recent_calls
    recent.append(signature)
    n = ctx.config.doom_loop_threshold
    if n > 0 and len(recent) >= n and all(c == signature for c in recent[-n:]):
        _fail(ctx, part, f"Doom loop: {part.tool} was called {n} times in a row with the same "
                         "arguments; the run was stopped.", doom_loop=True)
        return None
    prepared = None
    if tool.prepare is not None:  # what the person must see to decide (tools/base.py)
        try:
            prepared = await tool.prepare(part.input, ToolContext(
                session_id=ctx.session.id, message_id=part.message_id, call_id=part.call_id,
                part_id=part.id, run=ctx, **(tool_fields(ctx.host) if ctx.host is not None else {})))
        except ToolError as exc:
            _fail(ctx, part, str(exc))
            return None
    if ctx.gate is not None:
        denied = await ctx.gate(ctx, tool, part, prepared)
        if denied:
            _fail(ctx, part, denied, permission="denied")
            return None
    return tool, prepared


async def run_calls(ctx: RunContext, parts: list[ToolPart], tools: dict[str, Tool],
                    commit: Callable[[], Awaitable[None]]) -> None:
    """Run one round's calls: started together, at most MAX_CONCURRENT_CALLS running at
    once, each written in its place (its id keeps call order); past MAX_CALLS_PER_STEP none
    runs, and the model reads why."""
    slots = asyncio.Semaphore(MAX_CONCURRENT_CALLS)
    for part in parts[MAX_CALLS_PER_STEP:]:
        if not part.is_terminal:
            _fail(ctx, part, f"Not run: one step may make at most {MAX_CALLS_PER_STEP} tool "
                             f"calls and this one made {len(parts)}. Make the rest in your next "
                             "step (or combine them into fewer calls).")
    await asyncio.gather(*(run_call(ctx, p, tools, commit, slots)
                           for p in parts[:MAX_CALLS_PER_STEP] if not p.is_terminal))


async def run_call(ctx: RunContext, part: ToolPart, tools: dict[str, Tool],
                   commit: Callable[[], Awaitable[None]],
                   slots: asyncio.Semaphore | None = None) -> None:
    """Check, run and record one call; ``commit`` makes its ``running`` row durable;
    ``slots``: the round's bound on calls running at once."""
    checked = await _checked(ctx, part, tools)
    if checked is None:
        return
    if slots is None:
        await _run_checked(ctx, part, *checked, commit)
        return
    async with slots:
        await _run_checked(ctx, part, *checked, commit)


async def _run_checked(ctx: RunContext, part: ToolPart, tool: Tool, prepared: Prepared | None,
                       commit: Callable[[], Awaitable[None]]) -> None:
    ctx.writer.update_part(part.start())
    try:
        await commit()
    except Exception as exc:  # unrecorded, it does not run; the store error surfaces later
        _fail(ctx, part, f"{part.tool} was not run: its call could not be saved to the store "
                         f"({type(exc).__name__}: {exc}).")
        return
    scrub = ctx.writer.scrubber
    live: dict[str, StreamScrubber] = {}  # printed output, scrubbed as it streams

    def emit(stream: str, text: str) -> None:
        shown = (live.get(stream) or live.setdefault(stream, scrub.stream())).feed(text)
        if shown:
            ctx.bus.publish(ToolOutput(ctx.session.id, part.id, stream, shown))

    def display(bundle: dict[str, str]) -> None:
        ctx.bus.publish(DisplayData(ctx.session.id, part.id, bundle))

    tctx = ToolContext(
        session_id=ctx.session.id, message_id=part.message_id, call_id=part.call_id,
        part_id=part.id, root=ctx.session.directory,
        output_dir=ctx.output_dir, run=ctx, emit_output=emit, emit_display=display,
        display_available=ctx.display_available, prepared=prepared,
        **(tool_fields(ctx.host) if ctx.host is not None else {}),
    )
    timeout = tool.timeout or ctx.config.tool_timeout
    try:
        try:
            result = await asyncio.wait_for(tool.run(part.input, tctx), timeout)
        finally:  # what the stream held back, before the call's final row
            for stream, scrubbed in list(live.items()):
                if rest := scrubbed.flush():
                    ctx.bus.publish(ToolOutput(ctx.session.id, part.id, stream, rest))
    except TimeoutError:
        if tctx.stop.abandoned:  # its thread did not end: say so, and what that costs
            _fail(ctx, part, f"{part.tool} did not finish within {timeout:g} s; its thread did "
                             "not stop and was left running (at "
                             f"{MAX_ABANDONED} such threads, tool calls are refused until the "
                             "one returns or the kernel restarts). Do not call it again the same way.")
        else:
            _fail(ctx, part, f"{part.tool} did not finish within {timeout:g} s and was stopped.")
        return
    except asyncio.CancelledError:
        raise
    except ToolError as exc:  # the tool's own words (a traceback, a refusal)
        _fail(ctx, part, truncate(str(exc), output_dir=ctx.output_dir, name=part.id,
                                  scrubber=scrub).text)
        return
    except Exception as exc:  # a tool's failure is the model's information, not a crash
        _fail(ctx, part, scrub(f"{type(exc).__name__}: {exc}") or "")
        return
    # The tool ran; only what the model (and the store) sees is cut and scrubbed — the full
    # output saved on disk too.
    if "truncated" in result.metadata:  # the tool cut its own output (a stream)
        cut = Truncated(scrub(result.output) or "", False, 0, 0)
    else:
        cut = truncate(result.output, output_dir=ctx.output_dir, name=part.id, scrubber=scrub)
    # the images it showed: kept, each a file part after the call's row (session/images.py)
    files, notes = await keep_images(ctx, part, result.images)
    output = "\n".join([cut.text, *notes]) if notes else cut.text
    part.complete(output, title=result.title, metadata=result.metadata, changes=result.changes)
    if cut.truncated:
        part.metadata["truncated"] = {"total_lines": cut.total_lines,
                                      "total_bytes": cut.total_bytes, "saved": cut.saved_path}
    ctx.writer.update_part(part)
    for file in files:
        ctx.writer.update_part(file)
