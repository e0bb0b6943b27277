"""Replay: a recorded turn written again as a new turn, without asking the model (DESIGN §7).

The replayed turn is new messages in the session — the prompt, then one assistant message per
recorded one — each pointing at the message it repeats (``replay_of``), at cost 0 with no
tokens, and carrying ``metadata["replay"]`` (the original turn, when and with which model it
was recorded). Their parts are copies of the recorded parts, written through the run's write
entry, so the widget, the text stream and the store see them as they see a live turn.

Recorded ``python`` calls are run again, in order, in the kernel's namespace, so the variables
they built exist again; each result is compared with the recorded one (replay_diff.py). Other
tools are not run again: their recorded results are copied (files written by ``write`` and
``edit`` are still on disk — running an edit twice would apply it twice — and read-only tools
change no variable). Permission: ``python`` asks under ``build``; a replay asks once for the
whole turn, unless a recorded call of the turn was approved "for the session" (then that
approval is recorded again, and kept as the new session's grant, so later replayed turns — which
ran under it — do not ask either). Where ``python`` is not allowed (the
``plan`` agent, ``--tools python=false``, a deny rule) nothing is run again: the recorded
results are shown, marked as not re-executed.

The first re-run call whose result differs stops the replay. ``on_divergence="live"``: the
step's other calls are run, and the model takes over from there, reading the new results.
``"stop"``: the turn ends as an error that names the difference.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ..ids import new_id
from ..message import (
    ErrorInfo,
    Event,
    FilePart,
    Message,
    Part,
    Tokens,
    ToolPart,
    now,
    part_from_json,
)
from ..metadata_facts import ReplayDivergence, ReplayedCall, ReplayMark
from ..tools.permission import Rule
from .context import RunContext
from .host import SessionHandle
from .images import carry_image
from .loop import run_loop
from .permission_gate import decided, remember_grant
from .prompt import _drive, _running
from .replay_diff import difference
from .replay_match import Recording, describe
from .tool_call import run_call
from .turn import settle_tools

OnDivergence = Literal["live", "stop"]
_DROP_META = ("approval", "decision")  # the recorded call's approval, not this run's


@dataclass
class ReplayOutcome:
    message: Message  # the turn's last assistant message
    diverged: str | None = None  # the difference that stopped the replay, in words
    went_live: bool = False  # the model answered from the difference on
    refused: str | None = None  # why the recorded python calls could not be run again


def _copy(p: Part, message: Message) -> Part:
    """A recorded non-tool part, as a new part of ``message`` (a step costs nothing now)."""
    data = p.model_dump(mode="json")
    data.update(id=new_id("part"), session_id=message.session_id, message_id=message.id,
                created_at=now())
    for key in ("time_start", "time_end"):
        if data.get(key) is not None:
            data[key] = now()
    if data["type"] == "step-finish":
        data.update(tokens=Tokens().to_json(), cost=0.0)
    return part_from_json(data)


class _Replayer:
    def __init__(self, ctx: RunContext, session: SessionHandle, recording: Recording,
                 user: Message, on_divergence: OnDivergence) -> None:
        self.ctx, self.session, self.recording, self.user = ctx, session, recording, user
        self.on_divergence = on_divergence
        self.gate = ctx.gate
        self.info = describe(recording)
        self.approved: bool | None = None  # the turn's one answer about running python again
        self.outcome: ReplayOutcome | None = None
        self.diverged: dict[str, Any] | None = None
        self.refused: str | None = None
        self.rerun: set[str] = set()  # the calls run again: they kept their own images

    @property
    def stopped(self) -> bool:
        return self.refused is not None or (self.diverged is not None and self.on_divergence == "stop")

    async def run(self) -> Message:
        ctx = self.ctx
        last: Message | None = None
        for answer in self.recording.answers:
            last = await self._message(answer)
            if self.diverged is not None or self.refused is not None:
                break
        assert last is not None  # a recording has answers (replay_match.finished)
        if self.diverged is not None and self.on_divergence == "live" and self.refused is None:
            ctx.gate = self.gate
            assert ctx.host is not None  # a replay runs in a Forge's session
            ctx.host.announce(ctx.session.id, (
                f"Replay stopped: {self.diverged['tool']} call {self.diverged['index']} gave "
                f"another result ({self.diverged['difference']}). The model ({ctx.model}) "
                "takes over from here."))
            settle_tools(ctx.host, ctx)
            last = await run_loop(ctx)
        return last

    async def _message(self, answer: Message) -> Message:
        ctx = self.ctx
        m = ctx.add_message(Message(
            session_id=ctx.session.id, role="assistant", parent_id=self.user.id,
            agent=answer.agent, model=answer.model, provider=answer.provider, cost=0.0,
            replay_of=answer.id, metadata={"replay": self.info.stored()}))
        for p in answer.parts:
            if isinstance(p, ToolPart):
                await self._tool(m, p)
            elif isinstance(p, FilePart) and p.image is not None:
                if p.image.call_id not in self.rerun:  # a copied result: its recorded images
                    carry_image(ctx, p, _copy(p, m))
            else:
                ctx.writer.update_part(_copy(p, m))
        fields: dict[str, Any] = {"status": "completed", "finish": answer.finish,
                                  "completed_at": now()}
        meta = self.info.stored()
        if self.diverged is not None and self.diverged["message_id"] == m.id:
            meta["diverged"] = ReplayDivergence(**{k: v for k, v in self.diverged.items()
                                                   if k != "message_id"}).stored()
            if self.on_divergence == "live":
                fields["finish"] = "tool-calls"  # the model reads the new results next
            else:
                fields.update(status="error", finish="replay-diverged", error=ErrorInfo(
                    type="replay-diverged", message=self._diverged_words()))
        if self.refused is not None:
            fields.update(status="error", finish="replay-refused",
                          error=ErrorInfo(type="replay-refused", message=self.refused))
        current = ctx.writer.message(m.id) or m
        out = ctx.writer.update_message(current.model_copy(update={**fields, "metadata": {
            **current.metadata, "replay": meta}}))
        await ctx.flush()
        return out

    def _diverged_words(self) -> str:
        d = self.diverged or {}
        return (f"Replay of {self.info.cell} stopped: {d.get('tool')} call "
                f"{d.get('index')} gave another result than when recorded — "
                f"{d.get('difference')}. Run the cell with %%forge --live to ask the model "
                "again, or fix what changed (a data file, a variable).")

    async def _tool(self, m: Message, recorded: ToolPart) -> None:
        ctx = self.ctx
        part = ToolPart(  # ours to move on; the writer keeps snapshots of it
            session_id=ctx.session.id, message_id=m.id, call_id=recorded.call_id,
            tool=recorded.tool, input=dict(recorded.input), raw_input=recorded.raw_input,
            metadata={"replay": ReplayedCall(of=recorded.id).stored()})
        ctx.writer.update_part(part)
        if self.stopped:
            why = self.refused or self._diverged_words()
            ctx.writer.update_part(part.fail(f"Not replayed: {why}"))
            return
        if recorded.tool != "python":
            self._copy_result(part, recorded, "its recorded result (only python calls run again)")
            return
        allowed, why = await self._permit(part, recorded)
        if not allowed:
            if self.refused is None:
                self._copy_result(part, recorded, why)
            elif not part.is_terminal:
                ctx.writer.update_part(part.fail(f"Not replayed: {why}"))
            return
        part.metadata["replay"] = ReplayedCall(of=recorded.id, re_executed=True).stored()
        gate, ctx.gate = ctx.gate, None  # asked once for the turn, above
        try:
            await run_call(ctx, part, {"python": ctx.tools["python"]}, ctx.flush)
            self.rerun.add(recorded.call_id)
        finally:
            ctx.gate = gate
        if self.diverged is None:
            index = sum(1 for q in self._recorded_calls() if q.id <= recorded.id)
            found = difference(recorded, part)
            if found is not None:
                self.diverged = {"message_id": m.id, "part_id": part.id, "tool": part.tool,
                                 "index": index, "difference": found}

    def _recorded_calls(self) -> list[ToolPart]:
        return [p for a in self.recording.answers for p in a.tool_parts if p.tool == "python"]

    def _copy_result(self, part: ToolPart, recorded: ToolPart, why: str) -> None:
        meta = {k: v for k, v in recorded.metadata.items() if k not in _DROP_META}
        meta["replay"] = ReplayedCall(of=recorded.id, re_executed=False, why=why).stored()
        part.start()
        if recorded.state == "completed":
            part.complete(recorded.output or "", title=recorded.title, metadata=meta)
        else:
            part.fail(recorded.error or "failed when recorded", **meta)
        self.ctx.writer.update_part(part)

    async def _permit(self, part: ToolPart, recorded: ToolPart) -> tuple[bool, str]:
        """May this recorded python call run again? Asked at most once for the turn."""
        ctx = self.ctx
        tool = ctx.tools.get("python")
        if tool is None or ctx.permissions is None:
            return False, f"python is not allowed for the {ctx.agent} agent here, so it was not run again"
        verdict = ctx.permissions.evaluate("python", tool.permission_subject(
            part.input, ctx.session.directory, ctx.output_dir))
        if verdict.action == "allow":
            return True, ""
        if verdict.action == "deny":
            return False, f"python is denied here (rule {verdict.rule}), so it was not run again"
        if self.approved is None:
            self.approved = await self._ask(tool, part)
        if not self.approved:
            return False, self.refused or "not approved"
        return True, ""

    async def _ask(self, tool: Any, part: ToolPart) -> bool:
        ctx = self.ctx
        calls = self._recorded_calls()
        session_approved = [p for p in calls
                            if (p.metadata.get("decision") or {}).get("answer") == "session"]
        if session_approved:
            # approved for the session when recorded: that answer stands, kept as a grant
            ctx.writer.record(Event(session_id=ctx.session.id, type="permission.answered",
                                    actor="forge", data={
                                        "tool": "python", "answer": "session", "part_id": part.id,
                                        "reason": "replay: approved for the session when "
                                                  f"recorded (call {session_approved[0].id})"}))
            decided(part, "session", "replay", reason="approved for the session when recorded")
            grant = Rule("python", "*", "allow")
            if ctx.permissions is not None:
                ctx.permissions.grants.append(grant)
            remember_grant(self.session, grant)
            return True
        if self.gate is None:
            return True
        denied = await self.gate(ctx, tool, part)
        if denied is None:
            return True
        self.refused = (f"Replay of {self.info.cell}: running the recorded python "
                        f"calls again was not approved ({denied}). "
                        "Without them the variables they built are missing; approve the replay, "
                        "or run the cell with %%forge --live.")
        return False


async def replay_async(session: SessionHandle, recording: Recording, text: str, *,
                       agent: str | None = None, origin: dict[str, Any] | None = None,
                       on_divergence: OnDivergence = "live") -> ReplayOutcome:
    """Write ``recording`` again in ``session`` as a new turn (prompt ``text``)."""
    async with _running(session, model=None, agent=agent, tools=None, permissions=None,
                        budget=None, new_text=None, quiet=True) as ctx:
        info = describe(recording)
        user = ctx.user_message(text, origin=origin, replay_of=recording.user.id,
                                metadata={"replay": info.stored()})
        ctx.add_message(user)
        session.forge.announce(session.id, replay_notice(info))
        replayer = _Replayer(ctx, session, recording, user, on_divergence)
        last = await _drive(ctx, replayer.run)
        assert last is not None
        final = ctx.writer.message(last.id) or last
        return ReplayOutcome(final, diverged=replayer._diverged_words() if replayer.diverged else None,
                             went_live=replayer.diverged is not None and on_divergence == "live"
                             and replayer.refused is None, refused=replayer.refused)


def replay_notice(info: ReplayMark) -> str:
    """What the person reads first: this is a recording, from when and which model."""
    from ..render.replay_mark import recorded_words

    return (f"↻ Replayed: {recorded_words(info)} — no model call, $0. "
            "Run %%forge --live to ask the model again.")
