"""``question``: the model asks the person one question and waits for the answer.

Offered under the ``question`` flag (``Forge(flags=["question"])``; the notebook sets it where a
live widget can show the card): a script that did not ask for it never sees it. The question
and its options are the call's arguments and the answer its output, so history, replay and the
frames show both like any tool call. Where no one can answer (session/question.py) the call
returns at once saying so. What the model sends is checked here with errors it can act on; the
answer is the person's text — untrusted like any tool output, bounded, and scrubbed of secrets
on its way to the model and the store (tool_call.py, Writer.clean).
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..errors import ToolError
from ..message import Event
from ..session.question import MAX_ANSWER, NO_ONE, STOPPED, QuestionRequest, Reply
from .base import Tool, ToolContext, ToolResult

QUESTION_FLAG = "question"
MAX_QUESTION = 2_000  # characters: a question a person reads on a card, not a document
MAX_OPTIONS = 12
MAX_OPTION = 200
WAIT = 24 * 3600.0  # seconds a question waits: a person may be away; Stop ends it sooner

DESCRIPTION = (
    "Ask the user one question and wait for the answer. Use it only when you cannot go on "
    "without their decision or a fact only they know (which file, which of two readings, "
    "whether to overwrite); do not ask for what you can find out with other tools. Give "
    f"`options` (at most {MAX_OPTIONS} short choices) when the answer is one of a few; the "
    "user may still type their own answer. If no one can answer now, the result says so: "
    "then go on with a reasonable assumption and say which one you made."
)

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "question": {"type": "string",
                     "description": "The question, in one or two sentences the user can answer."},
        "options": {"type": "array", "items": {"type": "string"},
                    "description": "Choices shown as buttons (optional; short labels)."},
    },
    "required": ["question"],
    "additionalProperties": False,
}


def _checked(args: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
    """The question and options as they will be shown, or a ToolError the model can act on."""
    question = args.get("question")
    if not isinstance(question, str) or not question.strip():
        raise ToolError("question is empty: ask one question in words the user can answer.")
    question = question.strip()
    if len(question) > MAX_QUESTION:
        raise ToolError(f"question is {len(question):,} characters; keep it under "
                        f"{MAX_QUESTION:,} — ask one short question, not a document.")
    options = args.get("options") or []
    if not isinstance(options, list):
        raise ToolError("options must be a list of short strings.")
    if len(options) > MAX_OPTIONS:
        raise ToolError(f"{len(options):,} options is too many for a person to choose from; give "
                        f"at most {MAX_OPTIONS}, or ask an open question without options.")
    shown: list[str] = []
    for i, option in enumerate(options):
        if not isinstance(option, str):
            raise ToolError(f"options[{i}] is a {type(option).__name__}; each option is a string.")
        option = " ".join(option.split())  # one line on a button
        if not option:
            raise ToolError(f"options[{i}] is empty; each option is a short label.")
        if len(option) > MAX_OPTION:
            raise ToolError(f"options[{i}] is {len(option):,} characters; keep each option under "
                            f"{MAX_OPTION} (put details in the question).")
        if option in shown:
            raise ToolError(f"options[{i}] repeats {option!r}; give each choice once.")
        shown.append(option)
    return question, tuple(shown)


async def _ask(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    question, options = _checked(args)
    questions = ctx.questions
    writer = ctx.run.writer if ctx.run is not None else None
    scrub = writer.scrubber if writer is not None else (lambda text: text)

    def record(type_: str, actor: str, **data: Any) -> None:
        if writer is not None:  # scrubbed there (Writer.clean)
            writer.record(Event(session_id=ctx.session_id, type=type_, actor=actor, data=data))

    # The card shows what the model wrote: secrets it read somewhere never reach the screen.
    request = QuestionRequest(ctx.session_id, ctx.part_id, scrub(question) or "",
                              tuple(scrub(o) or "" for o in options))
    record("question.asked", "agent", request_id=request.id, part_id=ctx.part_id,
           question=request.question, options=list(request.options))
    if questions is None or not questions.can_answer:
        reply = Reply(None, "forge", NO_ONE)
    else:
        if ctx.run is not None:
            await ctx.run.flush()  # the question is visible to other processes (the side panel)
        try:
            reply = await questions.ask(request)
        except asyncio.CancelledError:  # Stop, abort, the timeout: the question is over
            record("question.answered", "forge", request_id=request.id, answer=None,
                   reason=STOPPED)
            raise
    record("question.answered", reply.by, request_id=request.id, answer=reply.text,
           reason=reply.reason)
    meta = {"request_id": request.id, "answered": reply.text is not None, "by": reply.by}
    if reply.text is None:
        meta["reason"] = reply.reason
        output = (f"The user did not answer: {reply.reason}. Do not ask again this turn; go on "
                  "with a reasonable assumption and say which one you made, or end your answer "
                  "with the question for the user.")
        return ToolResult(output, metadata={"question": meta})
    meta["answer"] = reply.text[:MAX_ANSWER]
    return ToolResult(f"The user answered: {reply.text}",
                      metadata={"question": meta})


def question_tool() -> Tool:
    return Tool(name="question", description=DESCRIPTION, parameters=PARAMETERS, execute=_ask,
                timeout=WAIT, flag=QUESTION_FLAG, subject_arg="question")
