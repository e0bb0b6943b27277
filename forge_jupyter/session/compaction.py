"""Context compaction: overflow detection, the summary boundary, tail retention (DESIGN §6).

A compaction is two messages appended to the timeline — nothing is deleted:
  1. a user message carrying a ``compaction`` part (auto or manual, the reason, and
     ``tail_start``: the first message kept verbatim, if any), and
  2. an assistant message with ``summary=True`` holding a structured summary.
filterCompacted (view.py) then stops at that boundary. When the summarizing call fails, an
extractive summary is written instead, so the loop never stalls on compaction. Every
compaction is an ``event`` row with the reason and the token counts before and after.
"""

from __future__ import annotations

import asyncio
import json

from .. import llm
from ..message import CompactionPart, Event, Message, StepFinishPart, TextPart, ToolPart, now
from .context import RunContext
from .prune import prune
from .view import compaction_part, filter_compacted, is_person_turn, is_summary

SUMMARY_INSTRUCTIONS = """\
Write a summary of the conversation above so that the work can continue without it. \
Use exactly these sections, in Markdown:

## Goal
What the user is trying to achieve (quote their first request).
## Decisions
What was decided, and why.
## Files, variables and DataFrames touched
Names, paths, shapes and what was done to each.
## Tool results that matter
Numbers, findings and errors later steps depend on.
## Open work
What remains to be done, in order.
## The user's latest instruction
Quote it verbatim.

Be concrete and brief. Do not call tools."""

CONTINUE_TEXT = (
    "The conversation above was compacted into a summary. Continue the task from where it "
    "left off; if nothing is left to do, say so briefly."
)
TAIL_TURNS = 2
TAIL_MIN_TOKENS, TAIL_MAX_TOKENS = 2_000, 8_000
_prompt_tokens: int | None = None


def prompt_tokens() -> int:
    """What the compaction request itself costs, charged to the overflow check (TrueForge)."""
    global _prompt_tokens
    if _prompt_tokens is None:
        _prompt_tokens = llm.approx_tokens(len(SUMMARY_INSTRUCTIONS)) + 32
    return _prompt_tokens


def estimate_tokens(message: Message) -> int:
    size = 0
    for p in message.parts:
        if isinstance(p, TextPart) or p.type == "reasoning":
            size += len(p.text)
        elif isinstance(p, ToolPart):
            size += len(json.dumps(p.input)) + len(p.output or p.error or "")
    return llm.approx_tokens(size) + 4


def usable_window(model: str, ratio: float) -> int | None:
    """Tokens the model may be sent before compaction: (context − output reserve) × ratio."""
    max_in, max_out = llm.context_window(model)
    if not max_in:
        return None
    reserve = min(max_out or 4_096, 32_000)
    if max_out and max_in == max_out:  # tables that give one total for both
        max_in = max_in * 2
    return int(max(max_in - reserve, max_in // 2) * ratio)


def pending(view: list[Message]) -> bool:
    """A compaction was requested (a user message with a compaction part) and not yet run."""
    for m in reversed(view):
        if m.role == "user":
            return compaction_part(m) is not None and not any(
                is_summary(x) for x in view[view.index(m) + 1:]
            )
    return False


def _last_step(view: list[Message]) -> tuple[StepFinishPart | None, int]:
    """The newest measured model step since the last compaction, and an estimate of the tokens
    written after it (its tools' outputs, newer messages): the next request carries those too."""
    after = 0
    for m in reversed(view):
        if m.summary:
            return None, 0  # just compacted: the next step measures the new view
        if m.role == "assistant":
            steps = [p for p in m.parts if isinstance(p, StepFinishPart)]
            if steps:
                outputs = "".join(p.output or p.error or "" for p in m.parts if isinstance(p, ToolPart))
                return steps[-1], after + llm.approx_tokens(len(outputs))
        after += estimate_tokens(m)
    return None, 0


def request_chars(ctx: RunContext, view: list[Message]) -> int:
    """About how many characters the next model request holds (system, tools, messages)."""
    tools = json.dumps([t.definition() for t in ctx.tools.values()]) if ctx.tools else ""
    return len(ctx.system) + len(tools) + sum(estimate_tokens(m) for m in model_order(view)) * llm.CHARS_PER_TOKEN


def overflow(ctx: RunContext, view: list[Message]) -> bool:
    """The last step's prompt + completion tokens (plus what was written after it, plus the
    compaction prompt itself) against the model's usable window; a character budget where
    litellm does not know the model."""
    step, after = _last_step(view)
    if step is None:
        return False
    window = usable_window(ctx.model, ctx.compaction_ratio)
    if window is None:
        chars = request_chars(ctx, view) + prompt_tokens() * llm.CHARS_PER_TOKEN
        return chars > ctx.char_budget * ctx.compaction_ratio
    # ``input`` already includes cache reads and writes (litellm's prompt_tokens).
    used = step.tokens.input + step.tokens.output + after + prompt_tokens()
    return used > window


def tail_budget(ctx: RunContext) -> int:
    """Tokens the kept tail may hold: 25 % of the usable window, within 2,000–8,000 — and never
    more than half the window, or a small model would compact again right away."""
    window = (usable_window(ctx.model, ctx.compaction_ratio)
              or llm.approx_tokens(int(ctx.char_budget * ctx.compaction_ratio)))
    return min(max(TAIL_MIN_TOKENS, min(TAIL_MAX_TOKENS, window // 4)), window // 2)


def tail_start(ctx: RunContext, view: list[Message]) -> str | None:
    """The first message of the last turns kept verbatim, or None.

    Keeps up to TAIL_TURNS user turns within ``tail_budget``, never reaching behind the
    previous boundary, and always leaves something before the tail to summarize. A tail
    starts at a user message, so a tool call is never separated from its result (both live
    in the same assistant message).
    """
    budget = tail_budget(ctx)
    used = 0
    starts: list[int] = []  # view indexes of the kept turns' user messages, newest first
    for i in range(len(view) - 1, -1, -1):
        m = view[i]
        if compaction_part(m) is not None or m.summary:
            break  # never reach behind the previous boundary
        used += estimate_tokens(m)
        if used > budget:
            break
        if is_person_turn(m):
            starts.append(i)
            if len(starts) >= TAIL_TURNS:
                break
    for i in reversed(starts):  # the longest tail that still leaves something to summarize
        if i > 0:
            return view[i].id
    return None


def request(ctx: RunContext, *, auto: bool, reason: str) -> Message:
    """Append the user message that asks for a compaction."""
    message = ctx.user_message()
    message.parts = [CompactionPart(session_id=ctx.session.id, message_id=message.id, auto=auto,
                                    reason=reason, tail_start=tail_start(ctx, ctx.view()))]
    return ctx.add_message(message)


def model_order(view: list[Message]) -> list[Message]:
    """The view as the model reads it: the boundary (its compaction request and summary) before
    the tail it kept verbatim; failed summaries and unanswered compaction requests left out
    (the store keeps them); old tool outputs pruned (prune.py)."""
    answered = {m.parent_id for m in view if is_summary(m)}
    ordered = [m for m in view
               if not (m.summary and not is_summary(m))
               and (compaction_part(m) is None or m.id in answered)]
    for i, m in enumerate(ordered):
        part = compaction_part(m)
        if part is not None and part.tail_start and i > 0 and ordered[0].id == part.tail_start:
            end = max(j for j, x in enumerate(ordered) if is_summary(x) and x.parent_id == m.id)
            ordered = ordered[i:end + 1] + ordered[:i] + ordered[end + 1:]
            break
    return prune(ordered)


def _texts(m: Message) -> str:
    return "\n".join(p.text for p in m.parts if isinstance(p, TextPart) and p.text)


def extractive_summary(history: list[Message], latest: str | None) -> str:
    """A summary built from the messages themselves, when the model could not write one."""
    users = [m for m in history if is_person_turn(m) and _texts(m)]
    goal = _texts(users[0]) if users else "(no user request found)"
    tools, files = [], []
    for m in history:
        for p in m.parts:
            if isinstance(p, ToolPart):
                result = (p.output or p.error or "").strip().splitlines()
                first = result[0][:200] if result else ""
                tools.append(f"- {p.tool}({json.dumps(p.input)[:120]}) → {p.state}: {first}")
                for key in ("path", "file", "filename"):
                    if isinstance(p.input.get(key), str):
                        files.append(p.input[key])
    answers = [_texts(m) for m in history
               if m.role == "assistant" and not m.summary and _texts(m)]
    earlier = [_texts(m) for m in history if is_summary(m) and _texts(m)]
    lines = [
        "(Extractive summary: the summarizing call failed, so this was assembled from the "
        "conversation itself.)",
        *(["## Earlier summary", earlier[-1][:4000]] if earlier else []),
        "## Goal", goal[:2000],
        "## Decisions", (answers[-1][:1500] if answers else "(none recorded)"),
        "## Files, variables and DataFrames touched", "\n".join(sorted(set(files))) or "(none recorded)",
        "## Tool results that matter", "\n".join(tools[-20:]) or "(no tool calls)",
        "## Open work", "(unknown — ask the user if unsure)",
        "## The user's latest instruction", latest or goal[:2000],
    ]
    return "\n".join(lines)


async def _log_to_memory(ctx: RunContext, summarized: list[Message]) -> str | None:
    """Append what this compaction summarized — tool results, decisions — to the long-term
    memory's daily log (memory/flush.py); returns the log's name. A failure is announced and
    never stops the compaction."""
    memory = ctx.host.services.memory if ctx.host is not None else None  # off: nothing
    if memory is None or not summarized:
        return None
    name = ctx.session.name
    label = f"{name} ({ctx.session.id})" if name else ctx.session.id
    try:
        return await asyncio.to_thread(memory.flush, summarized, session=label, scrub=ctx.scrub)
    except Exception as exc:  # a full disk, a folder that cannot be made: say so, go on
        if ctx.host is not None:
            ctx.host.announce(ctx.session.id, (
                f"Compaction could not write to the long-term memory log in {memory.path} ({exc}); "
                "the summary was written as usual. Check Forge.memory_dir."))
        return None


async def run(ctx: RunContext, view: list[Message]) -> Message:
    """Summarize everything before the boundary (except the kept tail) and record it."""
    from .processor import Processor

    request_msg = view[-1]
    part = compaction_part(request_msg)
    assert part is not None
    prior = view[:-1]
    if part.tail_start:
        cut = next((i for i, m in enumerate(prior) if m.id == part.tail_start), len(prior))
        to_summarize = prior[:cut]
    else:
        to_summarize = prior
    latest_user = next((_texts(m) for m in reversed(prior)
                        if is_person_turn(m) and _texts(m)), None)
    tokens_before = sum(estimate_tokens(m) for m in model_order(prior))

    summary = ctx.add_message(ctx.assistant_message(request_msg.id, summary=True))
    instructions = SUMMARY_INSTRUCTIONS
    if latest_user:
        instructions += f"\n\nThe user's latest instruction was:\n{latest_user}"
    messages = llm.to_model_messages(model_order(to_summarize), model=ctx.model)
    messages.append({"role": "user", "content": instructions})
    # a summary reads the conversation only: no tools, and no web search by the provider
    params = {k: v for k, v in ctx.params.items() if k != "web_search_options"}
    req = llm.LLMRequest(model=ctx.model, system=ctx.system, messages=messages, tools=[],
                         params=params, lean=ctx.config.lean_stream)
    await ctx.flush()
    await Processor(ctx, summary, tools={}).process(req)
    written = ctx.writer.message(summary.id)
    extractive = written is None or not is_summary(written) or not written.text.strip()
    if extractive:
        reason = written.error.message if written is not None and written.error else "empty summary"
        fallback = ctx.assistant_message(request_msg.id, summary=True, status="completed",
                                         finish="stop", completed_at=now(),
                                         metadata={"extractive": True, "summarizer_error": reason})
        fallback.parts = [TextPart(session_id=ctx.session.id, message_id=fallback.id,
                                   text=extractive_summary(to_summarize, latest_user),
                                   synthetic=True, time_start=now(), time_end=now())]
        ctx.add_message(fallback)
    memory_log = await _log_to_memory(ctx, to_summarize)
    ctx.compactions_this_run += 1
    if part.auto:
        ctx.add_message(ctx.user_message(CONTINUE_TEXT, synthetic=True,
                                         metadata={"continuation": True}))
    new_view = filter_compacted(reversed(ctx.view()))
    ctx.view_ids = [m.id for m in new_view]
    tokens_after = sum(estimate_tokens(m) for m in model_order(new_view))
    ctx.writer.record(Event(session_id=ctx.session.id, type="compaction", data={
        "auto": part.auto, "reason": part.reason, "request_message_id": request_msg.id,
        "summary_message_id": (fallback.id if extractive else summary.id),
        "tail_start": part.tail_start, "extractive": extractive,
        "tokens_before": tokens_before, "tokens_after": tokens_after, "memory_log": memory_log,
    }))
    await ctx.flush()
    return ctx.writer.message(ctx.view_ids[-1])  # type: ignore[return-value]

