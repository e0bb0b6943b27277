"""The Processor: one model round on one assistant message (the seed's inner loop).

It consumes the stream, writes Parts through the write entry with the seed's persistence
split — start: an empty full row; deltas: the bus only; while streaming: a full-row
checkpoint at most once a second (a timer, never per delta, so a crash loses at most the last
second); end: the full row, trailing whitespace trimmed; every tool state transition and both
step boundaries: full rows, a call's ``running`` row (arguments included) durable before it
runs — runs the round's tool calls (tool_call.py; concurrently, results kept in call order) and reports
``continue | stop | compact`` to runLoop. Whatever happens (error, abort), it leaves nothing
open: every part and the message reach a terminal state.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from typing import Literal

from .. import llm
from ..bus import SessionStatus
from ..message import (
    ErrorInfo,
    Message,
    PatchPart,
    ReasoningPart,
    RetryPart,
    StepFinishPart,
    StepStartPart,
    TextPart,
    Tokens,
    ToolPart,
    now,
)
from ..tools.arguments import parse_arguments
from .checkpoints import Checkpoints, SharedCommit
from .context import RunContext
from .recovery import close_open_parts
from .retry import classify, describe, describe_credentials, retry_after
from .server_parts import ServerParts
from .step_cap import OUTPUT_CAP_CHARS, Spending, StepCap, step_cap
from .tool_call import run_calls

log = logging.getLogger(__name__)
Outcome = Literal["continue", "stop", "compact"]
ABORTED = "aborted: the run was stopped before this call finished"
YIELD_EVERY = 0.02  # seconds of streaming between two turns of the event loop


CUT_OFF_CALL = ("Not run: the reply was cut off at the output limit (finish: length) before the "
                "step ended.")
BUDGET_CALL = ("Not run: forge stopped the reply at the prompt's budget before the step ended.")


def _cut_off_note(request: llm.LLMRequest, calls: bool, cap: StepCap | None = None) -> str:
    """What the person reads (and the model, next time) under a reply the limit cut off:
    the server's limit, or (``cap``) one forge stopped the stream at itself."""
    limit = request.params.get("max_tokens")
    at = f"max_tokens = {limit:,}" if isinstance(limit, int) else "the model server's own limit"
    if cap is not None and cap.limit == "max_tokens":
        at = (f"stopped by forge: past {cap.max_tokens:,} tokens by its estimate, and the "
              "server had not stopped")
    elif cap is not None:
        at = f"stopped by forge at its cap of {cap.chars:,} characters for one model step"
    ran = " Its tool calls were not run." if calls else ""
    return (f"Cut off at the output limit ({at}): this reply is incomplete.{ran} Send another "
            "prompt to go on (\"continue\", or ask for smaller steps), or raise the limit: "
            "Forge.max_tokens / FORGE_MAX_TOKENS / %%forge --max-tokens.")


class Processor:
    def __init__(self, ctx: RunContext, assistant: Message, *, tools: dict | None = None,
                 source: Callable[[llm.LLMRequest], AsyncIterator[llm.StreamEvent]] = llm.stream
                 ) -> None:
        self.ctx = ctx
        self.source = source  # where stream events come from: litellm, or a recorded list
        # The tools this round may call, by name (a summary's round: none).
        self.tool_table = ctx.tools if tools is None else tools
        # A compaction summary is one answer in text: no tools run, no limits apply.
        self.summary = assistant.summary
        self.assistant = assistant
        self.writer = ctx.writer
        self._text: TextPart | ReasoningPart | None = None
        self._buf: list[str] = []
        self._checkpoints = Checkpoints(self.writer)  # the open block's row, once a second
        # the provider's own tools (web search) and the sources its text cites
        self._server = ServerParts(self.writer, ctx.session.id, assistant.id)
        self._commit = SharedCommit(self.writer)  # running calls' rows, before they run
        self._call_at: dict[int, ToolPart] = {}  # this round's tool calls by stream index
        self._calls: list[ToolPart] = []
        self._finish: str | None = None
        self._received = False
        self._request: llm.LLMRequest | None = None
        self._counted = False  # this round's usage is in self.tokens (reported or estimated)
        self._cap: StepCap | None = None  # where forge stops this round's stream itself
        self._spending: Spending | None = None  # its estimated cost, in the prompt's pool
        self._stopped: StepCap | None = None  # the cap this round was stopped at, if it was
        self._chars = 0  # text and reasoning streamed: what the budget watch reads
        self.tokens = Tokens()
        self.cost: float | None = 0.0

    # ------------------------------------------------------------------------ entry point

    async def process(self, request: llm.LLMRequest) -> Outcome:
        try:
            return await self._guarded(request)
        finally:
            if self._spending is not None:  # a round never counted lets go of its estimate
                self.ctx.allowance.spend(0.0, self._spending.release())

    async def _guarded(self, request: llm.LLMRequest) -> Outcome:
        try:
            return await self._process(request)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()  # let the cleanup below await the final flush
            self._close("aborted", ErrorInfo(type="aborted", message=self.ctx.stop_words()))
            await asyncio.shield(self.ctx.flush())
            if not self.ctx.aborted:
                raise  # cancelled by someone else (a timeout, the kernel): pass it on
            return "stop"

    async def _process(self, request: llm.LLMRequest) -> Outcome:
        ctx = self.ctx
        if self.source is llm.stream:  # a live round (a recorded one replays what it holds)
            self._cap, self._spending = step_cap(request, ctx.allowance)
            if self.summary and self._cap.limit != "output-cap":  # a summary: only the cap
                self._cap, self._spending = StepCap(OUTPUT_CAP_CHARS, "output-cap"), None
            request.output_cap = self._cap.chars
        self._request = request
        self._put(StepStartPart(session_id=ctx.session.id, message_id=self.assistant.id, model=ctx.model))
        policy = ctx.config.retry
        attempt = 0
        while True:
            attempt += 1
            try:
                await self._consume(request)
                break
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # every model failure ends in a readable state
                kind = classify(exc)
                if kind == "context":
                    self._close("error", ErrorInfo(type="context_window", message=describe(exc)))
                    await ctx.flush()
                    return "compact"
                if kind == "retry" and not self._received and attempt < policy.max_attempts:
                    wait = policy.delay(attempt, retry_after(exc))
                    if wait < policy.max_retry_after or retry_after(exc) is None:
                        self._put(RetryPart(session_id=ctx.session.id, message_id=self.assistant.id,
                                            attempt=attempt, error=describe(exc), wait=wait))
                        ctx.bus.publish(SessionStatus(ctx.session.id, "retry", {
                            "attempt": attempt, "wait": wait,
                            "error": self.writer.scrubber(describe(exc))}))
                        await asyncio.sleep(wait)
                        ctx.bus.publish(SessionStatus(ctx.session.id, "busy", {}))
                        continue
                reason = (describe_credentials(exc, ctx.model, ctx.params)
                          if kind == "credentials" else describe(exc))
                if kind == "retry" and attempt > 1:
                    reason = f"gave up after {attempt} attempts — {reason}"
                elif self._received and kind == "retry":
                    reason = f"the stream broke after part of the answer arrived — {reason}"
                self._close("error", ErrorInfo(type=type(exc).__name__, message=reason))
                await ctx.flush()
                return "stop"

        # No flush here: each call's ``running`` row, arguments included, is made durable just
        # before it runs (``_run_tool``), so a crash mid-tool still finds the call in the store.
        outcome: Outcome = "stop"
        # Cut off at the output limit: the run stops here, said so, and nothing of the step runs
        # (a call may be cut mid-arguments; another step would likely be cut the same way).
        cut_off = self._finish in ("length", "budget") and not self.summary
        if self._calls and self.summary:
            for part in self._calls:
                self._fail_tool(part, "A summary must not call tools; the call was not run.")
        elif self._calls and cut_off:
            for part in self._calls:
                self._fail_tool(part, (CUT_OFF_CALL if self._finish == "length" else BUDGET_CALL) + (
                    f" Its arguments are incomplete JSON: {part.raw_input[:200]!r}."
                    if part.raw_input is not None else ""))
        elif self._calls:
            await self._run_tools()
            outcome = "continue"
            self._finish = "tool-calls"
        finish = self._finish
        error = None
        stop_note = None
        if self._finish == "budget" and cut_off:
            stop_note = ctx.allowance.stop_note("budget").replace(
                "Stopped:", "Stopped by forge mid-reply:", 1)
        elif cut_off:
            stop_note = _cut_off_note(request, bool(self._calls), self._stopped)
        doom = next((p for p in self._calls if p.doom_loop), None)
        allowance = ctx.allowance  # the prompt's, its subagents' steps and spending included
        if doom is not None:
            outcome, finish = "stop", "doom-loop"
            error = ErrorInfo(type="doom_loop", message=doom.error or "doom loop")
        elif outcome == "continue" and allowance.budget_spent():
            outcome, finish = "stop", "budget"
            stop_note = allowance.stop_note("budget")
        elif outcome == "continue" and allowance.steps_used_up():
            outcome, finish = "stop", "step-limit"
            stop_note = allowance.stop_note("step-limit")
        if stop_note:
            self._put(TextPart(session_id=ctx.session.id, message_id=self.assistant.id,
                               text=stop_note, synthetic=True, time_start=now(), time_end=now()))
        self._finish_message("error" if error else "completed", finish, error)
        if outcome != "continue":
            await ctx.flush()  # on "continue" the loop's flush before the next request covers it
        return outcome

    # ------------------------------------------------------------------------ the stream

    async def _consume(self, request: llm.LLMRequest) -> None:
        try:
            await self._read(request)
        finally:
            await self._checkpoints.settle()
        self._server.settle()
        if self._finish is None and self._stopped is not None:  # forge stopped it mid-stream
            self._end_block()
            message = self.writer.message(self.assistant.id) or self.assistant
            self._step_finish(llm.unfinished_step(request, message.parts, "budget"))

    async def _read(self, request: llm.LLMRequest) -> None:
        ctx = self.ctx
        sid, mid = ctx.session.id, self.assistant.id
        clock = time.monotonic
        next_yield = clock() + YIELD_EVERY
        spending = self._spending
        async with contextlib.aclosing(self.source(request)) as events:
            async for ev in events:
                if clock() >= next_yield:
                    # litellm hands over buffered chunks without returning to the event loop;
                    # yield now and then so Stop, approval clicks and widget timers are not
                    # starved — and count what streamed against the prompt's shared budget.
                    if spending is not None and spending.over(self._chars):
                        self._stopped = StepCap(self._chars, "budget")
                        break
                    await asyncio.sleep(0)
                    next_yield = clock() + YIELD_EVERY
                t = type(ev)
                if t is llm.TextDelta or t is llm.ReasoningDelta:  # the hot path: one add
                    self._chars += len(ev.text)
                    self._buf.append(ev.text)
                    self.writer.part_delta(self._text, "text", ev.text)
                elif t is llm.TextStart:
                    self._received = True
                    self._open(TextPart(session_id=sid, message_id=mid, time_start=now()))
                elif t is llm.ReasoningStart:
                    self._received = True
                    self._open(ReasoningPart(session_id=sid, message_id=mid, time_start=now()))
                elif t is llm.TextEnd or t is llm.ReasoningEnd:
                    if t is llm.ReasoningEnd and ev.signature:
                        self._text.metadata["signature"] = ev.signature
                    self._end_block()
                elif t is llm.ToolInputStart:
                    self._received = True
                    part = ToolPart(session_id=sid, message_id=mid, call_id=ev.call_id, tool=ev.name)
                    self._call_at[ev.index] = part
                    self._put(part)
                elif t is llm.ToolCall:
                    self._received = True
                    part = self._call_at.get(ev.index)
                    if part is None:  # a call with no name ever sent: it still gets a card
                        part = ToolPart(session_id=sid, message_id=mid, call_id=ev.call_id, tool=ev.name)
                        self._call_at[ev.index] = part
                    parsed = parse_arguments(part.tool, ev.arguments)  # bounded: size, depth
                    if parsed.args is not None:
                        part.input = parsed.args
                    else:
                        part.raw_input = parsed.kept
                    if parsed.problem is not None:
                        part.fail(parsed.problem)
                    self._calls.append(part)
                    self._put(part)  # the arguments are complete: the row (and the card) shows them
                elif t is llm.StepFinish:
                    self._step_finish(ev)
                elif t is llm.ServerToolCall or t is llm.ServerToolResult or t is llm.Citation:
                    self._received = True
                    self._server.handle(ev, self._text)

    def _open(self, part: TextPart | ReasoningPart) -> None:
        self._end_block()
        self._server.opened(part)
        self._text, self._buf = part, []
        self._put(part)
        self._checkpoints.start(part, self._buf)

    def _end_block(self) -> None:
        part = self._text
        if part is None:
            return
        self._checkpoints.stop()
        part.text = "".join(self._buf).rstrip()
        part.time_end = now()
        self._text, self._buf = None, []
        self._put(part)

    def _step_finish(self, ev: llm.StepFinish) -> None:
        if ev.cut and self._cap is not None:  # the stream passed this round's cap (llm.stream)
            self._stopped = self._cap
        stopped = self._stopped
        self._finish = ev.finish_reason
        if stopped is not None:
            self._finish = "budget" if stopped.limit == "budget" else "length"
        self._count_step(ev, stopped.limit if stopped is not None else None)

    def _count_step(self, ev: llm.StepFinish, stopped_by: str | None = None) -> None:
        """Add a round's usage and cost to the message and the prompt's budget; its
        step-finish part says them."""
        ctx = self.ctx
        self._counted = True
        self.tokens = self.tokens.add(ev.tokens)
        if ev.cost is None or self.cost is None:
            self.cost = None
        else:
            self.cost += ev.cost
        streamed = self._spending.release() if self._spending is not None else 0.0
        ctx.allowance.spend(ev.cost or 0.0, streamed, run_out=stopped_by == "budget")
        self._put(StepFinishPart(session_id=ctx.session.id, message_id=self.assistant.id,
                                 reason=self._finish if stopped_by else ev.finish_reason,
                                 tokens=ev.tokens, cost=ev.cost, model=ev.model,
                                 stopped_by_forge=stopped_by))

    # ------------------------------------------------------------------------ tools

    async def _run_tools(self) -> None:
        # Started together, written in call order: each part already has its place (its id).
        await run_calls(self.ctx, self._calls, self.tool_table, self._commit)
        files = [f for p in self._calls if p.state == "completed" for f in p.changes]
        if files:  # what this step changed on disk, one unified diff per file
            self._put(PatchPart(session_id=self.ctx.session.id, message_id=self.assistant.id,
                                files=files))

    def _fail_tool(self, part: ToolPart, message: str, **meta: object) -> None:
        if not part.is_terminal:  # refused already (arguments out of bounds): keep that reason
            self._put(part.fail(message, **meta))

    # ------------------------------------------------------------------------ closing

    def _put(self, part) -> None:
        self.writer.update_part(part)

    def _close(self, status: str, error: ErrorInfo | None) -> None:
        """Close every open part and finish the message (error or abort)."""
        if self._text is not None:
            self._end_block()
        message = self.writer.message(self.assistant.id) or self.assistant
        tool_error = ABORTED if status == "aborted" else f"not run: {error.message if error else status}"
        for part in close_open_parts(message, tool_error=tool_error, at=now()):
            self._put(part)
        self._estimate_step(status)
        self._finish_message(status, self._finish if status != "aborted" else "aborted", error)

    def _estimate_step(self, status: str) -> None:
        """A round stopped (or broken) before the provider reported its usage still cost what
        streamed: counted here, marked estimated, and priced — "cost unknown" (None) where the
        price table lacks the model, never $0."""
        request = self._request
        if self._counted or request is None:
            return
        if not self._received:  # nothing streamed; what the model costs may still be unknown
            if self.cost is not None and llm.step_cost(request.model, Tokens()) is None:
                self.cost = None
            return
        message = self.writer.message(self.assistant.id) or self.assistant
        if not message.is_terminal:
            self._count_step(llm.unfinished_step(request, message.parts, status))

    def _finish_message(self, status: str, finish: str | None, error: ErrorInfo | None) -> None:
        current = self.writer.message(self.assistant.id) or self.assistant
        if current.is_terminal:
            return
        done = current.model_copy(update={
            "status": status, "finish": finish, "error": error, "tokens": self.tokens,
            "cost": self.cost, "completed_at": now(),
        })
        self.assistant = self.writer.update_message(done)
