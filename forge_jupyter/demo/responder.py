"""The offline demo model: a deterministic responder for a notebook with no API key.

It reads the person's question and the tools offered, and works like a (very small) analyst:
1. find the DataFrame the question is about — one it names, one seen earlier in the
   conversation, else ask `variables` (list the namespace, then inspect the frame);
2. compute the answer with one read-only `sql` query over it (or `python` for a chart, which the
   build agent asks the person to approve);
3. answer from that tool's actual result, quoting its numbers and the table.
Questions it has no rule for get an honest list of what it can do. Each turn's answer starts by
saying that it is the demo model and how to use a real one — once a turn: the steps before it
(the text beside a tool call) do not repeat it, or it would open every message of the history.
The demo keeps no state: each request is answered from its own messages.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from .intents import choose_frame, classify, names_in_backticks
from .plans import Plan, code, listing, plan_for
from .reading import (
    Conversation,
    Frame,
    ToolStep,
    frames_known,
    read_conversation,
    string_parameter,
)
from .turn import Event, Turn, text, tool_call

if TYPE_CHECKING:
    from .server import RecordedRequest

ANNOUNCEMENT = "I'm the offline demo model (no API key was found), so I answer by simple rules."
HINT = ("Set OPENAI_API_KEY or ANTHROPIC_API_KEY (or choose a model with `Forge.model`, or start "
        "Ollama) to talk to a real model.")
CAN_DO = (
    "I can compute these about a DataFrame in your notebook, with the `sql` tool: missing values "
    "per column; the number of rows and columns; the column names and types; the mean, median, "
    "maximum, minimum or total of a column, also per group (“which region had the highest "
    "revenue?”); the top N rows by a column; value counts; a describe()-style summary; the first "
    "N rows. And I can draw a chart with `python` (after you approve it). Name the DataFrame in "
    "backticks, e.g. “How many missing values per column does `df` have?”"
)
QUOTED_LINES = 25


def demo_turn(request: RecordedRequest, chunk_delay: float = 0.0) -> Turn:
    """The demo model's answer to `request` (either protocol)."""
    conversation = read_conversation(request.messages, request.body.get("tools") or [])
    return Turn(respond(conversation), chunk_delay=chunk_delay)


def respond(conv: Conversation) -> list[Event]:
    intent = classify(conv.question)
    if intent is None:
        asked = conv.question if len(conv.question) <= 200 else conv.question[:200] + "…"
        echo = f"You asked: “{asked}”." if asked else "You sent an empty message."
        return [text(f"{ANNOUNCEMENT} {echo} I have no rule for that, so I won't guess. "
                     f"{CAN_DO}\n\n{HINT}")]  # an answer with no step before it
    if intent.kind == "inventory":
        return _inventory(conv)
    found = _find_frame(conv)
    if isinstance(found, str):
        return [text(_final(found))]
    if isinstance(found, tuple):
        return _call(conv, *found)
    plan = plan_for(intent, found, conv.question, python="python" in conv.tools)
    if isinstance(plan, str):
        return [text(_final(plan))]
    plan.note = " ".join(n for n in (_passed_over(conv, found), plan.note) if n)
    if plan.tool not in conv.tools:
        return [text(_final(f"I would {plan.doing} with the `{plan.tool}` tool, but it is not "
                            f"offered in this turn (an agent or `--tools` option removed it)."))]
    args = {string_parameter(conv.tools[plan.tool], "query" if plan.tool == "sql" else "code"):
            plan.code}
    step = conv.done_this_turn(plan.tool, args)
    if step is None:
        why = ("read-only DuckDB over your DataFrames, so it runs without asking" if plan.tool == "sql"
               else "it runs code in your kernel, so the build agent asks for your approval first")
        return _call(conv, plan.tool, args, f"I'll {plan.doing} with `{plan.tool}` ({why}).")
    return [text(_final(_answer(plan, step)))]


def _find_frame(conv: Conversation) -> Frame | str | tuple[str, dict[str, Any], str]:
    """The DataFrame to work on, the `variables` call that finds it, or why there is none."""
    if "variables" not in conv.tools and not frames_known(conv.history):
        return "I need the `variables` tool to find your DataFrames, and it is not offered here."
    frames = frames_known(conv.history)
    known = {f.name for f in frames} | {c for f in frames for c, _ in f.columns}
    for name in names_in_backticks(conv.question):
        if name not in known and _may_call(conv, {"name": name}):
            return ("variables", {"name": name}, f"I'll look at {code(name)} with `variables`.")
    frame = choose_frame(conv.question, frames)
    if frame is not None and frame.inspected:
        return frame
    if frame is not None and _may_call(conv, {"name": frame.name}):
        return ("variables", {"name": frame.name},
                f"I'll look at {code(frame.name)} with `variables` (its columns and types).")
    if frame is not None:  # looked at this turn, and still no columns known
        return (f"`variables` showed me no columns for {code(frame.name)} (the demo reads the "
                "columns of pandas DataFrames), so I have nothing to compute over.")
    if len(frames) > 1:
        names = ", ".join(code(f.name) for f in frames)
        return (f"Your notebook has several DataFrames ({names}) and your question names none of "
                f"them. Ask again with the one you mean in backticks, e.g. {code(frames[-1].name)}.")
    if _may_call(conv, {}):
        return ("variables", {}, "I'll list your notebook's variables with `variables` to find the "
                                 "DataFrame.")
    looked = [s for s in conv.steps if s.name == "variables" and s.args]
    said = ""
    if looked and looked[-1].output:
        first = looked[-1].output.strip().splitlines()[0][:200]
        said = f" For {code(str(looked[-1].args.get('name')))}, `variables` said: {code(first)}."
    return ("I found no DataFrame to work on: the sql tool answers questions about pandas, polars "
            f"or Arrow tables in your notebook.{said} Create one (e.g. `df = pd.read_csv(...)`) "
            "and ask again.")


def _passed_over(conv: Conversation, frame: Frame) -> str:
    """Names the person quoted that `variables` looked at this turn and found no DataFrame."""
    names = [str(s.args["name"]) for s in conv.steps if s.name == "variables" and s.args.get("name")]
    names = [n for n in names if n != frame.name and n not in dict(frame.columns)]
    if not names:
        return ""
    verb = "is not a DataFrame" if len(names) == 1 else "are not DataFrames"
    return f"{listing([code(n) for n in names])} {verb} of your notebook, so I used {code(frame.name)}."


def _may_call(conv: Conversation, args: dict[str, Any]) -> bool:
    """`variables` with these arguments is offered and was not called yet in this turn."""
    return "variables" in conv.tools and conv.done_this_turn("variables", args) is None


def _call(conv: Conversation, tool: str, args: dict[str, Any], say: str) -> list[Event]:
    return [text(say), tool_call(tool, args)]  # a step: the turn's answer says what the demo is


def _inventory(conv: Conversation) -> list[Event]:
    step = conv.done_this_turn("variables", {})
    if step is not None and step.output is not None:
        return [text(_final(f"The `variables` tool returned:\n\n{_fence(step.output)}"))]
    if "variables" not in conv.tools:
        return [text(_final("I would list your variables with the `variables` tool, but it is not "
                            "offered here."))]
    return _call(conv, "variables", {}, "Let me look at the variables in your notebook.")


def _answer(plan: Plan, step: ToolStep) -> str:
    output = step.output or ""
    if step.error:
        advice = ("`python` runs code in your kernel, so the build agent needs a person's approval: "
                  "in JupyterLab answer Allow once / Allow for session in the cell, or allow it "
                  "with a permission rule." if plan.tool == "python" else
                  "A real model would read the error and try again; the demo stops here.")
        return f"The `{plan.tool}` call did not go through:\n\n{_fence(output)}\n\n{advice}"
    said = plan.answer(output)
    note = f"{plan.note}\n\n" if plan.note else ""
    return f"{note}{said}\n\n{_fence(output)}"


def _final(body: str) -> str:
    return f"{ANNOUNCEMENT} {HINT}\n\n{body}"


def _lines(output: str) -> list[str]:
    lines = output.strip("\n").splitlines() or ["(no output)"]
    if len(lines) > QUOTED_LINES:
        lines = [*lines[:QUOTED_LINES], f"… ({len(lines) - QUOTED_LINES} more lines)"]
    return lines


def _fence(output: str) -> str:
    """The tool's output verbatim in a code block no line of it can close."""
    lines = _lines(output)
    longest = max((len(run) for run in re.findall(r"`+", "\n".join(lines))), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}text\n" + "\n".join(lines) + f"\n{ticks}"
