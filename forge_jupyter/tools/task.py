"""``task``: hand a self-contained job to a subagent in a child session.

The child session records its parent (``parent_id``); the parent's assistant message gets a
``subtask`` part naming the child; the child's final answer is this tool's result. The child
runs under its own agent's defaults plus every rule of the parent's session and prompt layers,
so it can never do more than the parent was allowed to — nor spend more: it takes its model
steps and money from the parent prompt's allowance (session/allowance.py), one level deeper,
and past ``MAX_TASK_DEPTH`` levels (or with nothing left) a ``task`` call fails.
"""

from __future__ import annotations

from typing import Any

from ..errors import ToolError
from ..message import SubtaskPart
from .base import Tool, ToolContext, ToolResult, title_line
from .permission import Rule


async def run_task(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    run = ctx.run
    if ctx.agents is None or ctx.new_session is None or run is None:
        raise ToolError("task needs a running Forge session")
    agent = args.get("agent") or "plan"
    ctx.agents.get(agent)  # a clear error for an unknown agent
    allowance = run.allowance
    refused = allowance.child_refused()
    if refused:
        raise ToolError(refused)
    parent = run.session
    child = ctx.new_session(None, new=True, parent_id=parent.id, title=args["description"][:200],
                          agent=agent, directory=parent.directory)
    run.writer.update_part(SubtaskPart(session_id=parent.id, message_id=ctx.message_id, agent=agent,
                                       prompt=args["prompt"], description=args["description"],
                                       child_session_id=child.id))
    inherited = []
    if run.permissions is not None:
        for name, rules in run.permissions.layers:
            if name != "agent":
                inherited.extend(rules)
        # what the parent's agent denies, the child may not do either
        inherited.extend(r for r in dict(run.permissions.layers).get("agent", ()) if r.action == "deny")
    # No view follows a child session: a question it asked would wait where nobody sees it.
    inherited.append(Rule("question", "*", "deny"))
    answer = await child.prompt_async(args["prompt"], agent=agent, permissions=inherited,
                                      model=run.model, allowance=allowance.child())
    if answer.status != "completed":
        reason = answer.error.message if answer.error else answer.status
        raise ToolError(f"The subagent ({agent}, session {child.id}) did not finish: {reason}\n"
                        f"{answer.text}")
    return ToolResult(answer.text or "(the subagent gave no answer)", title=title_line(args["description"]) or "task",
                      metadata={"child_session_id": child.id, "cost": answer.cost})


def task_tool() -> Tool:
    return Tool(
        name="task",
        description=(
            "Delegate a self-contained job to a subagent in its own child session; returns its "
            "final answer. It does not see this conversation: `prompt` must hold everything it "
            "needs."
        ),
        parameters={
            "type": "object",
            "properties": {
                "description": {"type": "string", "description": "a few words: what the job is"},
                "prompt": {"type": "string", "description": "the full instructions"},
                "agent": {"type": "string",
                          "description": "'plan' (read-only, the default) or a configured agent"},
            },
            "required": ["description", "prompt"],
            "additionalProperties": False,
        },
        execute=run_task,
    )
