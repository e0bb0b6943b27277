"""runLoop: the outer loop of one prompt (the seed's ReAct scheduler).

Each iteration reads the model's view, then, in this order: exits if the last assistant
message has finished with no tool call pending (the single exit condition); runs a requested
compaction; compacts on context overflow; and only then writes an assistant skeleton and
hands it to the Processor, which answers ``continue | stop | compact``.
"""

from __future__ import annotations

from .. import llm
from ..message import Message, TextPart, ToolPart, now
from . import compaction
from .context import RunContext
from .processor import Processor


def _last(view: list[Message], role: str) -> Message | None:
    for m in reversed(view):
        if m.role == role:
            return m
    return None


def finished(view: list[Message]) -> bool:
    """The single exit condition: the last assistant message, after the last user message,
    has finished, and no tool call of it is pending or asks to be answered."""
    if not view or view[-1].role != "assistant":
        return False
    last = view[-1]
    if not last.is_terminal:
        return False
    if any(not p.is_terminal for p in last.parts if isinstance(p, ToolPart)):
        return False
    if last.status == "completed" and last.finish == "tool-calls":
        return False  # the model has not yet read its tools' results
    return True


def _stopped(ctx: RunContext, last_user: Message, why: str) -> None:
    """The prompt's steps or money were used up (by its other runs, a subagent's) before this
    run could ask the model: an answer saying so, and no request."""
    message = ctx.assistant_message(last_user.id, status="completed", finish=why,
                                    completed_at=now())
    message.parts = [TextPart(session_id=ctx.session.id, message_id=message.id, synthetic=True,
                              text=ctx.allowance.stop_note(why), time_start=now(),
                              time_end=now())]
    ctx.add_message(message)


async def run_loop(ctx: RunContext) -> Message:
    """Run the session until the exit condition; returns the last assistant message."""
    while True:
        view = ctx.view()
        if finished(view):
            break
        last_user = _last(view, "user")
        if last_user is None:
            raise RuntimeError("runLoop needs a user message to answer")
        if compaction.pending(view):
            await compaction.run(ctx, view)
            continue
        if compaction.overflow(ctx, view):
            compaction.request(ctx, auto=True, reason="context overflow")
            continue
        refused = ctx.allowance.take_step()  # shared with the prompt's subagents
        if refused is not None:
            _stopped(ctx, last_user, refused)
            break
        assistant = ctx.add_message(ctx.assistant_message(last_user.id))
        request = llm.LLMRequest(
            model=ctx.model,
            system=ctx.system,
            messages=llm.to_model_messages(compaction.model_order(view), model=ctx.model,
                                           images=ctx.image_sending()),
            tools=[t.definition() for t in ctx.tools.values()],
            params=ctx.params,
            lean=ctx.config.lean_stream,
        )
        if ctx.prepare is not None:
            request = ctx.prepare(request)
        await ctx.flush()  # every full row is durable before the next model request
        outcome = await Processor(ctx, assistant).process(request)
        if outcome == "stop":
            break
        if outcome == "compact":
            if ctx.compactions_this_run >= 2:
                break  # the window stays too small even after compacting: do not loop
            compaction.request(ctx, auto=True, reason="the provider reported a context-window overflow")
    last = _last(ctx.view(), "assistant")
    if last is None:  # pragma: no cover - the loop always writes one
        raise RuntimeError("the run ended without an assistant message")
    return last
