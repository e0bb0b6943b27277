"""One prompt to several models, each in a fork of its own (docs/compare.md).

``compare_async(session, text, models)`` forks ``session`` once per model at its last message
(a new session beside it when it has none), runs the prompt in every fork concurrently — at
most ``concurrency`` at a time — and gives back one ``Column`` per model, in the order asked.
The session compared from is never written to: a fork is a pointer copy, so the runs share the
history read and nothing else.

Why the read-only tool set by default: the runs go side by side, so two models editing the
same file or the same notebook would race, and the person would have to undo N models' changes
to keep one. Every tool that changes something (the registry's ``mutating`` tools: edit,
write, python, the cell tools, …) is denied for the runs, as the ``plan`` agent denies them;
each run is told so in a synthetic note, so a model that needs one says so instead of
guessing. ``writes=True`` keeps the agent's own permissions (each mutating call then asks).

One allowance covers the comparison: the budget is what all the runs together may spend, and
the step limit is the session's per prompt times the number of models — so a model that loops
cannot starve the others of steps beyond its share, yet no model is cut short by a fixed
split of money it did not need. A model that fails is a column with its error, never a failed
comparison.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ForgeError, NotFound, positive_int, positive_number
from ..message import Message, SessionInfo, StepFinishPart, ToolPart
from ..tools.permission import Rule
from .allowance import Allowance

MAX_MODELS = 8  # columns a person can still read side by side
DEFAULT_CONCURRENCY = 3
RUN_NOTE = ("This prompt is one run of a side-by-side comparison of models (forge compare). "
            "Tools that change files, the notebook or the kernel are not offered in it; if the "
            "task needs one, say which and why instead of working around it.")


@dataclass(frozen=True)
class Column:
    """One model's run: the fork it ran in, its finished turn (as stored), or why it failed."""

    model: str
    session: Any  # the fork (a Session); None when it could not be made
    user: Message | None = None
    turn: list[Message] = field(default_factory=list)  # the assistant messages of the prompt
    error: str | None = None
    replayed: bool = False

    @property
    def answer(self) -> Message | None:
        return self.turn[-1] if self.turn else None

    def figures(self) -> dict[str, Any]:
        """One row of the comparison's DataFrame (docs/compare.md names every column)."""
        answer = self.answer
        steps = [p for m in self.turn for p in m.parts if isinstance(p, StepFinishPart)]
        calls = [p for m in self.turn for p in m.parts if isinstance(p, ToolPart)]
        started = self.user.created_at if self.user is not None else None
        first = min((p.time_start for m in self.turn for p in m.parts
                     if p.type in ("text", "reasoning", "tool") and p.time_start), default=None)
        ended = answer.completed_at if answer is not None else None
        error = self.error or (answer.error.message if answer is not None and answer.error else None)
        costs = [m.cost for m in self.turn]
        return {
            "model": self.model,
            "answer": answer.text if answer is not None else "",
            "status": "error" if error else (answer.status if answer is not None else "error"),
            "finish": answer.finish if answer is not None else None,
            "steps": len(steps),
            "tool_calls": len(calls),
            "tokens_in": sum(m.tokens.input for m in self.turn),
            "tokens_out": sum(m.tokens.output for m in self.turn),
            # None where the price table does not know the model (never a made-up 0)
            "cost": None if any(c is None for c in costs) else float(sum(costs)),
            "first_token_s": None if first is None or started is None else max(0.0, first - started),
            "latency_s": None if ended is None or started is None else max(0.0, ended - started),
            "session_id": self.session.id if self.session is not None else None,
            "error": error,
            "replayed": self.replayed,
        }


def check_models(models: Sequence[str] | str) -> list[str]:
    """The models as a list: ``"a,b"`` or ``["a", "b"]``, each once, 2 to MAX_MODELS."""
    names = models.split(",") if isinstance(models, str) else list(models)
    out: list[str] = []
    for name in (str(n).strip() for n in names):
        if name and name not in out:
            out.append(name)
    if not 1 <= len(out) <= MAX_MODELS:
        raise ForgeError(f"compare takes 1 to {MAX_MODELS} models, comma-separated, e.g. "
                         "--compare openai/gpt-4o-mini,anthropic/claude-haiku-4-5 "
                         f"(got {len(out)})")
    return out


def _fork(session: Any, group: str, model: str, origin: dict[str, Any] | None) -> Any:
    """A session for ``model``'s run: a fork at ``session``'s last message, else a new one."""
    from .session import Session

    # the notebook only inside "compare": a fork is never taken for the notebook's own session
    meta = {"compare": {"group": group, "model": model, "from": session.id,
                        "cell": (origin or {}).get("cell_id"),
                        "notebook": (origin or {}).get("notebook")}}
    try:
        return session.fork(model=model, metadata=meta)
    except NotFound:  # no messages yet: a new session beside it
        info = session.info
        new = SessionInfo(title=info.title, agent=info.agent, model=model,
                          directory=info.directory, metadata=meta)
        return Session(session.forge, session.forge.services.store.create_session(new))


def read_column(session: Any, model: str, *, user_id: str | None = None) -> Column:
    """``model``'s column from its fork as stored: the prompt (``user_id``, else the last one)
    and its answers, up to the person's next prompt there (a fork one went on in)."""
    from .view import load_turn

    session.forge.flush()
    return _column(session, model, load_turn(session.forge.services.store, session.id, user_id))


def _column(session: Any, model: str, turn: list[Message], replayed: bool = False) -> Column:
    """The column of ``turn`` (its prompt first, then everything after it)."""
    from .view import is_person_turn

    user = turn[0] if turn and turn[0].role == "user" else None
    answers: list[Message] = []
    for m in turn[1:] if user is not None else ():
        if m.role == "user" and is_person_turn(m):
            break
        if m.role == "assistant" and not m.summary:  # a compaction's continuation included
            answers.append(m)
    return Column(model, session, user, answers, replayed=replayed)


def _going_on(column: Column) -> Column:
    """A replayed column in a fork of its own, at its answer (a pointer copy): the recorded fork
    may have gone on since, and a cell that goes on from this answer again (Continue here,
    then %%forge) must find its own recording at this point, as in the recorded run."""
    answer = column.answer
    if column.session is None or answer is None or not answer.is_terminal:
        return column
    mark = {**column.session.info.metadata.get("compare", {}), "replayed": True}
    fork = column.session.fork(answer.id, metadata={"compare": mark})
    return Column(column.model, fork, column.user, column.turn, column.error, replayed=True)


def recorded(session: Any, text: str, models: Sequence[str],
             origin: dict[str, Any]) -> list[Column] | None:
    """The latest comparison this notebook cell ran of ``text`` with these models, as stored
    (Run All replays it, asking no model); None when there is none to replay."""
    from .session import Session

    cell, notebook = origin.get("cell_id"), origin.get("notebook")
    if cell is None and notebook is None:  # a script: nothing says which run this repeats
        return None
    forge = session.forge
    store = forge.services.store
    forge.flush()
    groups: dict[str, dict[str, SessionInfo]] = {}
    cursor = None
    while True:
        page = store.list_sessions(cursor=cursor, limit=500)
        for info in page.items:
            mark = info.metadata.get("compare")
            # by the cell where the runner gives cell ids; else (nbclient) by the notebook,
            # the prompt and the models below
            if (isinstance(mark, dict) and (cell is None or mark.get("cell") == cell)
                    and mark.get("notebook") == notebook and isinstance(mark.get("group"), str)
                    and not mark.get("replayed")):
                groups.setdefault(mark["group"], {})[str(mark.get("model"))] = info
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    wanted = set(models)
    for forks in sorted(groups.values(), key=lambda g: max(i.created_at for i in g.values()),
                        reverse=True):
        if set(forks) != wanted:
            continue
        columns = []
        for model in models:
            fork = Session(forge, forks[model])
            messages = fork.messages()  # read once: the prompt is found in it, then its turn
            at = next((n for n, m in enumerate(messages) if m.role == "user"
                       and (m.origin or {}).get("compare", {}).get("group")
                       == forks[model].metadata["compare"]["group"]), None)
            if at is None or messages[at].text.strip() != text.strip():
                break
            columns.append(_column(fork, model, messages[at:], replayed=True))
        else:
            return [_going_on(c) for c in columns]
    return None


async def compare_async(session: Any, text: str, models: Sequence[str] | str, *,
                        agent: str | None = None, budget: float | None = None,
                        max_tokens: int | None = None, concurrency: int = DEFAULT_CONCURRENCY,
                        writes: bool = False, origin: dict[str, Any] | None = None,
                        context: str | None = None,
                        attachments: Sequence[str] = ()) -> list[Column]:
    """Run ``text`` once per model, each in its own fork of ``session``; one Column each."""
    names = check_models(models)
    concurrency = positive_int(concurrency, "concurrency", "Give how many runs may go at "
                               "once, e.g. concurrency=2.")
    if budget is not None:
        budget = positive_number(budget, "budget", "Give the most the whole comparison may "
                                 "spend in US dollars, e.g. budget=0.25, or no budget.")
    if max_tokens is not None:
        max_tokens = positive_int(max_tokens, "max_tokens", "Give the most output tokens per "
                                  "model call, e.g. max_tokens=1024.")
    forge = session.forge
    group = "cmp_" + uuid.uuid4().hex[:12]
    allowance = Allowance.top(forge.step_limit * len(names), budget, max_tokens)
    rules: list[Rule] = []
    if not writes:
        rules = [Rule(t.name, "*", "deny") for t in forge.services.registry.all() if t.mutating]
    note = "\n\n".join(n for n in (context, None if writes else RUN_NOTE) if n)
    gate = asyncio.Semaphore(concurrency)

    async def run(model: str) -> Column:
        try:
            fork = await asyncio.to_thread(_fork, session, group, model, origin)
        except ForgeError as exc:
            return Column(model, None, error=str(exc))
        async with gate:
            try:
                await fork.prompt_async(
                    text, model=model, agent=agent, permissions=rules, allowance=allowance,
                    origin={**(origin or {}), "compare": {"group": group, "models": names}},
                    context=note or None, attachments=attachments)
            except ForgeError as exc:  # a model forge cannot call, a busy session, …
                return Column(model, fork, error=str(exc))
        # the fork's latest person's prompt is this one (nothing else runs there); the
        # answer's own parent may be a compaction's continuation, not the prompt
        return await asyncio.to_thread(read_column, fork, model)

    return list(await asyncio.gather(*(run(m) for m in names)))
