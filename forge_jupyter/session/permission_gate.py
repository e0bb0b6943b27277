"""The permission gate: what runs before each tool call of a turn (DESIGN §5).

The call's subject (a file tool's path normalized under the root, else its argument) is
matched against the turn's layered rules: ``allow`` goes ahead, ``deny`` refuses with a reason
the model reads, ``ask`` suspends the call until a person answers (session/approval.py) — or
refuses at once where nothing can answer. Every refusal, question and answer is an event row,
written through the run's write entry; an "allow for this session" answer is kept in the
session's metadata, so the next turn's permissions hold it too.
"""

from __future__ import annotations

from ..errors import ToolError
from ..message import Event, ToolPart
from ..tools.base import Prepared, Tool
from ..tools.permission import PathSubject, Permissions, Rule
from .approval import ApprovalRequest, Approvals
from .context import RunContext
from .host import SessionHandle


class PermissionGate:
    """``await gate(ctx, tool, part)``: None to go ahead, else why the call may not run."""

    def __init__(self, permissions: Permissions, approvals: Approvals,
                 session: SessionHandle) -> None:
        self.permissions = permissions
        self.approvals = approvals
        self.session = session

    async def __call__(self, ctx: RunContext, tool: Tool, part: ToolPart,
                       prepared: Prepared | None = None) -> str | None:
        sid = ctx.session.id
        record = ctx.writer.record
        try:  # a file tool's path, normalized under the root; never matched raw
            subject = tool.permission_subject(part.input, ctx.session.directory, ctx.output_dir)
        except ToolError as exc:
            record(Event(session_id=sid, type="permission.denied", actor="forge",
                         data={"tool": tool.name, "reason": str(exc)[:500], "part_id": part.id}))
            decided(part, "deny", "rule", reason=str(exc)[:500])
            return f"Permission denied: {exc}"
        # apply_patch names several paths: each is checked, the strictest verdict holds
        subjects = subject if isinstance(subject, tuple) else (subject,)
        verdict, subject = self.permissions.strictest(tool.name, subjects)
        # what the tool looked up (a cell's source): shown with the ask, kept on the call
        shown = ctx.writer.scrubber.data(dict(prepared.show)) if prepared and prepared.show else {}
        if shown:
            part.metadata["shown"] = shown
        forced = prepared.ask if prepared is not None and verdict.action == "allow" else None
        if verdict.action == "allow" and forced is None:
            return None
        if verdict.action == "ask":  # the person approves the whole call: show every path
            subject = ", ".join(map(str, subjects))
        rule = forced or str(verdict.rule)  # an ask the call itself needs says why instead
        facts = {"tool": tool.name, "subject": str(subject)[:500], "rule": rule,
                 "layer": "tool" if forced else verdict.layer, "part_id": part.id}
        if verdict.action == "deny":
            record(Event(session_id=sid, type="permission.denied", actor="forge", data=facts))
            decided(part, "deny", "rule", rule=str(verdict.rule))
            on = f" on {subject}" if isinstance(subject, PathSubject) else ""
            return (f"Permission denied: {tool.name} is not allowed{on} here "
                    f"(rule {verdict.rule}, {verdict.layer} layer). Do not retry it; tell the "
                    "user what you wanted to do instead.")
        scrub = ctx.writer.scrubber  # the request is shown on the screen
        request = ApprovalRequest(sid, part.id, tool.name, {**scrub.data(dict(part.input)), **shown},
                                  scrub(str(subject)) or "", rule)
        record(Event(session_id=sid, type="permission.asked", actor="agent",
                     data={**facts, "request_id": request.id}))
        if not self.approvals.can_answer:
            reason = ("no one can answer approvals here (no approval handler is registered, "
                      "as in a plain script)")
            record(Event(session_id=sid, type="permission.answered", actor="forge",
                         data={"request_id": request.id, "answer": "deny", "reason": reason}))
            decided(part, "deny", "forge", reason=reason)
            why = f" ({forced})" if forced else ""
            return (f"Permission denied: {tool.name} needs a person's approval{why} and {reason}. "
                    "Tell the user what you wanted to do; they can allow it with a "
                    "permission rule or answer approvals in the notebook.")
        part.metadata["approval"] = request.id
        ctx.writer.update_part(part)
        await ctx.flush()  # the request is visible to other processes (the side panel)
        answer = await self.approvals.ask(request)
        record(Event(session_id=sid, type="permission.answered", actor=answer.by,
                     data={"request_id": request.id, "answer": answer.answer,
                           "reason": answer.reason}))
        decided(part, answer.answer, answer.by, reason=answer.reason)
        if answer.answer == "deny":
            why = f": {answer.reason}" if answer.reason else "."
            who = ("The user" if not answer.handler else "An approval handler"
                   if answer.by == "a handler" else f"The approval handler {answer.by}")
            return f"{who} denied this {tool.name} call{why}"
        if answer.answer == "session":
            grant = Rule(tool.name, "*", "allow")
            self.permissions.grants.append(grant)
            remember_grant(self.session, grant)
        return None


def decided(part: ToolPart, answer: str, by: str, *, rule: str | None = None,
            reason: str | None = None) -> None:
    """Keep on the call who decided it and how, as the live widget tells it from the events
    (notebook/turn_state.py): ``answer`` once | session | deny, ``by`` widget | user | forge
    (no one could answer) | rule | a name. The static record reads it (render.decision_text)."""
    part.metadata["decision"] = {"answer": answer, "by": by, "rule": rule, "reason": reason}


def remember_grant(session: SessionHandle, grant: Rule) -> None:
    """Keep an "allow for this session" answer for the next turns of this process (the
    kernel): in the Forge's approvals, never in the store (``Approvals.grant``)."""
    session.forge.services.approvals.grant(session.id, grant)
