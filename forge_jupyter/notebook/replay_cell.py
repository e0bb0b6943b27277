"""The notebook side of replay: whether a ``%%forge`` cell replays, and where (DESIGN §7).

Mode: ``Forge.replay`` (auto | off | strict, ``FORGE_REPLAY``), overridden per cell by
``%%forge --live`` (ask the model) and ``%%forge --replay`` (replay, or fail). A prompt from the
side panel has no cell, so it is always live.

The point of history a cell runs at: a kernel that has not yet run a ``%%forge`` cell in the
notebook's session stands at the *start* of a history — Restart & Run All replays from the
top. Once a cell ran here (or ``%forge use``/``new``/``fork`` chose the session), it stands
after the session's last turn. A recording that starts a history, found while the current
session already holds turns, is replayed into a new session of the notebook (which becomes
current): the replayed turn then has the same turns before it as when it was recorded.
"""

from __future__ import annotations

import argparse
import asyncio
from dataclasses import dataclass
from typing import Any

from IPython.core.error import UsageError

from ..session.replay import OnDivergence, ReplayOutcome, replay_async
from ..session.replay_match import Recording, cell_label, find_recording, point_of
from .cell_errors import ForgeReplayError


@dataclass
class ReplayPlan:
    recording: Recording
    session: Any  # where the replayed turn is written
    on_divergence: OnDivergence
    strict: bool  # a difference fails the cell
    # the recording began a fresh session the notebook moved on to (session/poisoned.py):
    # what its origin says of the session set aside, kept on the replayed turn
    fresh_start: dict[str, Any] | None = None


def cell_mode(config_value: str, opts: argparse.Namespace) -> str:
    """off | auto | strict | require (``--replay``: replay or fail, differences per config)."""
    if opts.live and opts.replay:
        raise UsageError("%%forge takes --live or --replay, not both")
    if opts.panel or opts.live:
        return "off"
    if opts.replay:
        return "require"
    return config_value.lower()


def _scrubbed(text: str) -> tuple[str, ...]:
    """The prompt as the store may hold it: with known secrets replaced (the write entry)."""
    from ..scrub import Scrubber

    try:
        shown = Scrubber.from_environment()(text)
    except Exception:  # a spelling we cannot compute: match the text as written only
        return ()
    return (shown,) if shown and shown != text else ()


def _plan(controller: Any, session: Any, text: str, agent: str, origin: dict[str, Any],
          mode: str) -> ReplayPlan | None:
    store = controller.forge.store
    entered = session.id in controller.replay_entered
    point = point_of(store, session.id) if entered else None
    def search_at(point: str | None) -> Any:
        return find_recording(store, notebook=origin.get("notebook"), cell_id=origin.get("cell_id"),
                              text=text, agent=agent, point=point, texts=_scrubbed(text))

    search = search_at(point)
    fresh_start = None
    if search.recording is None and point is not None:
        # Recorded where the notebook had set a poisoned session aside: at the start of a
        # fresh history — so its replay starts one too, as the recorded run did.
        again = search_at(None)
        mark = (again.recording.user.origin or {}).get("fresh_start") if again.recording else None
        if isinstance(mark, dict) and mark.get("point") == point:  # the same history before
            search, fresh_start = again, mark
    if search.recording is None:
        if mode in ("strict", "require"):
            flag = "%%forge --replay" if mode == "require" else 'Forge.replay = "strict"'
            found = controller.found_notebook() if not origin.get("notebook") else None
            why = f"{search.why_not} ({found.why})" if found is not None else search.why_not
            raise ForgeReplayError(
                f"{flag}: no recorded turn of {cell_label(origin.get('cell_id'), text)} matches — "
                f"{why}. Run the cell with %%forge --live to ask the model (it needs "
                "a model and, for a paid one, a key), or import the notebook's recordings "
                "(forge.import_notebook_turns).")
        return None
    target = session
    if fresh_start is not None or (not entered and store.timeline_length(session.id) > 0):
        target = controller.new()  # the recording starts a history: so does its replay
    strict = controller.config.replay.lower() == "strict"
    return ReplayPlan(search.recording, target, "stop" if strict else "live", strict, fresh_start)


async def replay_plan(controller: Any, opts: argparse.Namespace, session: Any, text: str,
                      origin: dict[str, Any]) -> ReplayPlan | None:
    """The replay this cell runs, or None to ask the model (reads the store off the loop)."""
    mode = cell_mode(controller.config.replay, opts)
    if mode == "off":
        return None
    agent = opts.agent or session.info.agent or controller.forge.default_agent
    controller.forge.flush()
    return await asyncio.to_thread(_plan, controller, session, text, agent, origin, mode)


async def replay(plan: ReplayPlan, text: str, *, origin: dict[str, Any],
                 agent: str | None) -> ReplayOutcome:
    if plan.fresh_start is not None:  # the next Run All finds this copy a fresh start too
        origin = {**origin, "fresh_start": plan.fresh_start}
    return await replay_async(plan.session, plan.recording, text, agent=agent, origin=origin,
                              on_divergence=plan.on_divergence)


def check(plan: ReplayPlan, outcome: ReplayOutcome) -> None:
    """A replay that could not hold fails the cell, saying why (after its record is shown)."""
    if outcome.refused is not None:
        raise ForgeReplayError(outcome.refused)
    if outcome.diverged is not None and not outcome.went_live:
        raise ForgeReplayError(outcome.diverged)
