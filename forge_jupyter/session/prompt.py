"""SessionPrompt: persist the user message, take the session's runner, run the loop.

``prompt_async`` is the native form (await it in a kernel); ``prompt`` the synchronous one (a
script; in a running loop, where ``asyncio.run`` fails, a helper thread). ``compact_async``.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

from .. import llm
from ..errors import ApprovalPending, BudgetExceeded, SessionBusy, positive_int, positive_number
from ..message import ErrorInfo, Event, FilePart, Message, TextPart, now
from ..model_choice import MAX_TOKENS_HINT
from ..scrub import valid_text
from . import compaction, runner
from .allowance import Allowance
from .context import RunContext
from .host import SessionHandle
from .images import pasted_images
from .loop import run_loop
from .recovery import close_open_parts, recover, take_lease
from .title import title_of
from .turn import decide, run_context
from .view import is_person_turn, load_view
from .writer import Writer

# How long an interrupted synchronous call waits for its coroutine's cleanup (a shell command's
# SIGTERM-then-SIGKILL takes up to 2 s; an abort's final flush is quick).
_CLEANUP_SECONDS = 15.0


@contextlib.asynccontextmanager
async def _running(session: SessionHandle, *, model: str | None, agent: str | None,
                   tools: dict[str, bool] | None, permissions: list[Any] | None,
                   budget: float | None, new_text: str | None,
                   max_tokens: int | None = None, quiet: bool = False,
                   allowance: Allowance | None = None) -> AsyncIterator[RunContext]:
    """Take the session's runner (claim + lease), recover what a dead runner left open, read
    the model's view, decide the turn (turn.py) and build the run's context from it; release
    everything on the way out."""
    forge = session.forge
    store = forge.services.store
    sid = session.id
    waiting = forge.services.approvals.pending(sid)
    if waiting:
        r = waiting[0]
        raise ApprovalPending(
            f"session {sid} has a tool call waiting for your approval ({r.tool}, request {r.id}); "
            f"answer it first: forge.approve({r.id!r}, 'once' | 'session' | 'deny')."
        )
    asked = forge.services.questions.pending(sid)
    if asked:  # the same rule for the question tool (seed: "approvals or questions pending")
        q = asked[0]
        raise ApprovalPending(
            f"session {sid} has a question waiting for your answer ({q.question[:80]!r}, "
            f"request {q.id}); answer it first: session.answer({q.id!r}, 'your answer'), or in "
            "the notebook's card — or stop the run."
        )
    run = runner.claim(id(store), sid)
    leased = False
    heartbeat: asyncio.Task | None = None
    writer: Writer | None = None
    ctx: RunContext | None = None
    new_session = False  # nothing in its timeline yet: this prompt gives it its title
    try:
        run.loop, run.task = asyncio.get_running_loop(), asyncio.current_task()
        await forge.flush_async()  # rows of earlier runs land before we read
        # MCP servers start on first use, before the lease (a start may take its minute).
        await forge.prepare_tools(sid)
        leased, held, recovered, view = await asyncio.to_thread(_take_runner, store, sid,
                                                                run.owner)
        if not leased:
            owner, expires = held or ("another process", now())
            raise SessionBusy(runner.busy_message(sid, owner, expires))
        # no prompt of the person's yet (a shell record may come first): this one titles it
        new_session = not any(is_person_turn(m) for m in view)
        turn = decide(forge, session.info, model=model, agent=agent, tools=tools,
                      permissions=permissions or (), max_tokens=max_tokens, replaying=quiet)
        if budget is not None and new_text is not None:
            _check_budget(turn.model, turn.system, view, new_text, budget)
        writer = Writer(forge.services.projection, forge.services.bus, turn.scrubber)
        # Every flush of this run's rows commits only while it still holds the lease.
        writer.hold_lease(sid, run.owner, _on_lost(forge, store, run, writer))
        writer.adopt(view)
        if recovered:
            writer.record(Event(session_id=sid, type="recovery.noticed",
                                data={"messages": [m.id for m in recovered]}))
        ctx = run_context(forge, session, turn, writer, view, budget, allowance)
        ctx.aborted = run.abort_requested
        run.ctx = ctx
        # quiet: a replay, which asks no model (replay.py). Said once a session (the footer of
        # every answer names the model): the notice again at each cell would be noise.
        if turn.notice and not quiet and (sid, turn.notice) not in forge.notices_said:
            forge.notices_said.add((sid, turn.notice))
            forge.announce(sid, turn.notice)
        heartbeat = asyncio.create_task(_heartbeat(forge, store, sid, run))
        forge.services.bus.publish(_status(sid, "busy"))
        yield ctx
    finally:
        if heartbeat is not None:
            heartbeat.cancel()
        title = None
        with contextlib.suppress(Exception):  # a title is never worth keeping the lease
            title = _title(ctx) if ctx is not None and new_session else None
        with contextlib.suppress(Exception):
            await asyncio.to_thread(_give_back, store, sid, writer,
                                    run.owner if leased else None, title)
        runner.release(id(store), sid)
        forge.services.bus.publish(_status(sid, "idle"))


def _take_runner(store: Any, sid: str,
                 owner: str) -> tuple[bool, Any, list[Message], list[Message]]:
    """Lease (taking over a dead local runner's), recovery and the model's view in one opening
    of the store: (leased, the other holder's lease, what was recovered, the view)."""
    with store.hold():
        leased, held = take_lease(store, sid, owner)
        if not leased:
            return False, held, [], []
        # We hold the lease: anything left open belongs to a runner that died.
        recovered = recover(store, sid)
        view, _start = load_view(store, sid)
        return True, None, recovered, view


def _give_back(store: Any, sid: str, writer: Writer | None, owner: str | None,
               title: str | None = None) -> None:
    """The last rows, then a new session's title and the lease in one opening of the store.
    Rows the store cannot take yet keep the lease: they stay fenced by it and land at a later
    flush while it is still this run's (a later prompt of this process takes it over at once).
    The rows go before the file is held: a flush takes the projection's lock, then the file's,
    and the other order deadlocks two runs of this process ending at once (a comparison's)."""
    try:
        if writer is not None:
            writer.flush()
        with store.hold():
            try:
                if title is not None:
                    info = store.get_session(sid)  # fresh: a grant may have changed its metadata
                    if info.title is None:  # never over a title someone set meanwhile
                        store.update_session(info.model_copy(update={"title": title}))
            finally:
                if owner is not None:
                    store.release_lease(sid, owner)
    finally:
        if writer is not None:
            writer.let_go()


def _title(ctx: RunContext) -> str | None:
    """A new session's title: the first line of its first prompt (session/title.py), from the
    prompt as stored — scrubbed by the write entry — and scrubbed once more, as the session row
    does not pass through the write entry."""
    first = next((m for m in ctx.view() if is_person_turn(m)), None)
    return ctx.scrub(title_of(first.text)) if first is not None else None


async def _drive(ctx: RunContext, body: Callable[[], Awaitable[Message | None]]) -> Message | None:
    """Run ``body``; an abort (or any cancel) closes what is open and is recorded."""
    try:
        result = await body()
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is not None:
            task.uncancel()
        result = _close_running(ctx)
        ctx.writer.record(Event(session_id=ctx.session.id, type="abort", actor="user",
                                data={"message_id": result.id if result else None}))
        await asyncio.shield(ctx.flush())
        if (lost := ctx.writer.lost) is not None:
            raise lost from None  # stopped because another runner took the session over
        if not ctx.aborted:
            raise
        return result
    if (lost := ctx.writer.lost) is not None:
        raise lost
    if ctx.aborted and result is not None:
        ctx.writer.record(Event(session_id=ctx.session.id, type="abort", actor="user",
                                data={"message_id": result.id}))
    await ctx.flush()
    return result


async def prompt_async(
    session: SessionHandle,
    text: str,
    *,
    model: str | None = None,
    agent: str | None = None,
    tools: dict[str, bool] | None = None,
    budget: float | None = None,
    origin: dict[str, Any] | None = None,
    files: list[str] | None = None,
    permissions: list[Any] | None = None,
    max_tokens: int | None = None,
    allowance: Allowance | None = None,
    context: str | None = None,
    attachments: Sequence[str] = (), images: Sequence[tuple[bytes, str]] = (),
) -> Message:
    """Answer ``text`` in ``session``; returns the finished assistant message.

    ``allowance``: a subagent's prompt (the ``task`` tool) takes its steps, money, output limit
    and depth from its parent prompt's; ``budget`` and ``max_tokens`` then do not apply.
    ``attachments``, ``context``, ``images``: what it points at (notebook/mentions/), where the
    person is (cells/note.py), what was pasted as (bytes, MIME): parts after the text.

    The prompt is text from outside like any other: made valid Unicode here, and scrubbed of
    secrets by the write entry — the model, the store and the screen see ``[secret:…]`` where
    the person pasted a key (a key the code needs belongs in an environment variable)."""
    text, files = valid_text(text), [valid_text(f) for f in files or ()]
    if max_tokens is not None:  # refused before anything is claimed, read or written
        max_tokens = positive_int(max_tokens, "max_tokens", MAX_TOKENS_HINT)
    if budget is not None:  # refused before anything is claimed, read or written
        budget = positive_number(budget, "budget", "Give the most this prompt may spend in US "
                                 "dollars, e.g. budget=0.25 (%%forge --budget 0.25), or no "
                                 "budget for no limit.")
    if allowance is not None:  # a subagent: the parent prompt's limits are the ones that hold
        budget, max_tokens = None, allowance.max_tokens
    notes = [valid_text(n) for n in [*attachments, *([context] if context else [])]]
    async with _running(session, model=model, agent=agent, tools=tools, permissions=permissions,
                        budget=budget, new_text="\n\n".join([text, *notes]), max_tokens=max_tokens,
                        allowance=allowance) as ctx:
        user = ctx.user_message(text, origin=origin,
                                metadata={"budget": budget} if budget is not None else {})
        for note in notes:  # the harness's parts, scrubbed by the write entry like the text
            user.parts.append(TextPart(session_id=session.id, message_id=user.id, synthetic=True,
                                       text=note, time_start=now(), time_end=now()))
        user.parts.extend(FilePart(session_id=session.id, message_id=user.id, path=p) for p in files)
        user.parts.extend(await pasted_images(ctx, user, images))  # kept by hash, named by parts
        ctx.add_message(user)
        result = await _drive(ctx, lambda: run_loop(ctx))
        assert result is not None
        answer = ctx.writer.message(result.id) or result
    # Its last row is written now: where the store refused one of its rows, the answer is the
    # message as stored (status error, what was not stored), not the one the run held.
    return ctx.writer.projection.as_stored(answer)


async def compact_async(session: SessionHandle, *, model: str | None = None,
                        reason: str = "requested by the user") -> Message:
    """Compact the session now (a manual compaction); returns the summary message."""
    async with _running(session, model=model, agent=None, tools=None, permissions=None,
                        budget=None, new_text=None) as ctx:
        if not ctx.view_ids:
            raise ValueError(f"session {session.id} has no messages to compact")

        async def body() -> Message | None:
            request = compaction.request(ctx, auto=False, reason=reason)
            await compaction.run(ctx, ctx.view())
            return next(m for m in reversed([ctx.writer.message(i) for i in ctx.view_ids])
                        if m is not None and m.parent_id == request.id)

        result = await _drive(ctx, body)
        assert result is not None
        return result


def _status(sid: str, status: str) -> Any:
    from ..bus import SessionStatus

    return SessionStatus(sid, status, {})


async def _heartbeat(forge: Any, store: Any, sid: str, run: runner.Run) -> None:
    """Renew the lease while the run lives. A lease another runner took meanwhile (this one
    was thought dead: paused past its expiry, cut off from the database) is not fought for:
    this run stops where it is and says so; the model is not asked again for it. (A flush
    fenced by the lease may find out first, between two beats: the same stop, at once.)"""
    while True:
        await asyncio.sleep(runner.LEASE_TTL / 3)
        try:
            kept = await asyncio.to_thread(store.acquire_lease, sid, run.owner, runner.LEASE_TTL)
        except Exception:  # the store is out of reach for now: the next beat tries again
            continue
        if not kept:
            held = await asyncio.to_thread(store.lease, sid)
            await asyncio.to_thread(run.ctx.writer.lose, held[0] if held else None)
            return


def _on_lost(forge: Any, store: Any, run: runner.Run, writer: Writer) -> Callable[[Any], None]:
    """What a run does once its lease went to another runner (told once, off the event
    loop: by the thread whose flush was fenced, or the heartbeat's): stop, and say so."""
    def stop(_error: Any) -> None:
        lost = writer.lost
        if lost is None:
            return
        notice = str(lost)
        # The one row a stale runner still writes: this notice, an event beside the new
        # owner's rows (never one of its messages, parts or pointers), telling whoever reads
        # the session why this run stopped.
        with contextlib.suppress(Exception):
            store.put_event(Event(session_id=run.session_id, type="notice", actor="forge",
                                  data={"message": notice}))
        loop = run.loop
        if loop is not None and not loop.is_closed():
            from ..bus import SessionStatus

            loop.call_soon_threadsafe(forge.services.bus.publish, SessionStatus(
                run.session_id, "notice", {"message": notice}))
        run.abort()
    return stop


def _close_running(ctx: RunContext) -> Message | None:
    """After a cancel between steps: finish whatever assistant message is still open."""
    last = None
    for mid in ctx.view_ids:
        m = ctx.writer.message(mid)
        if m is None:
            continue
        if m.role == "assistant":
            last = m
        if not m.is_terminal:
            for part in close_open_parts(m, tool_error="aborted: the run was stopped", at=now()):
                ctx.writer.update_part(part)
            last = ctx.writer.update_message(m.model_copy(update={
                "status": "aborted", "finish": "aborted", "completed_at": now(),
                "error": ErrorInfo(type="aborted", message=ctx.stop_words())}))
    return last


def _check_budget(model: str, system: str, view: list[Message], text: str, budget: float) -> None:
    """Refuse before sending when the input alone would cost more than the budget."""
    price = llm.input_price(model)
    if price is None:
        return  # the price table does not know the model: the in-run check still applies
    messages = [{"role": "system", "content": system},
                *llm.to_model_messages(compaction.model_order(view), model=model),
                {"role": "user", "content": text}]
    tokens = llm.count_tokens(model, messages=messages)
    estimate = tokens * price
    if estimate > budget:
        raise BudgetExceeded(
            f"this prompt would cost about ${estimate:.4f} in input alone ({tokens:,} tokens to "
            f"{model}), more than its budget of ${budget:.4f}. Raise the budget, compact the "
            "session (session.compact()), or start a new one."
        )


def run_sync(coro_factory: Any) -> Any:
    """Run ``coro_factory()`` to completion from synchronous code, loop or no loop.

    Inside a running loop (a kernel cell) the coroutine runs on a helper thread with its own
    loop, in the caller's context (so output lands in the calling cell). An interrupt of the
    waiting thread (the kernel's Interrupt, Ctrl-C) cancels that
    coroutine and waits for its cleanup — a prompt records its abort, a shell command's
    process group is stopped — before it is raised: otherwise the work would go on unseen
    after the cell had already returned, holding the session."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro_factory())
    box: dict[str, Any] = {}
    started, done = threading.Event(), threading.Event()
    context = contextvars.copy_context()  # the cell's: what the run prints lands in that cell

    async def main() -> Any:
        box["loop"], box["task"] = asyncio.get_running_loop(), asyncio.current_task()
        started.set()
        return await coro_factory()

    def target() -> None:
        try:
            box["result"] = context.run(asyncio.run, main())
        except BaseException as exc:  # handed back to the caller's thread
            box["error"] = exc
        finally:
            started.set()
            done.set()

    # Waited for on an Event, not Thread.join: an interrupted join in CPython 3.11 marks a
    # thread that is still running as stopped (bpo-45274's fix), so no later join would wait.
    threading.Thread(target=target, name="forge-prompt", daemon=True).start()
    try:
        done.wait()
    except BaseException:
        _cancel_and_wait(box, started, done)
        raise
    if "error" in box:
        raise box["error"]
    return box["result"]


def _cancel_and_wait(box: dict[str, Any], started: threading.Event,
                     done: threading.Event) -> None:
    """Cancel the helper thread's coroutine and give its cleanup time to finish; a second
    interrupt meanwhile gives up waiting (the cleanup still runs, unseen)."""
    started.wait(5)
    loop, task = box.get("loop"), box.get("task")
    if loop is not None and task is not None:
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nothing runs
            loop.call_soon_threadsafe(task.cancel)
    done.wait(_CLEANUP_SECONDS)
