"""``%forge revert``: "Revert to here" in a notebook (session/revert.py does the work).

``%forge revert`` lists the current session's turns; ``%forge revert TURN [--code |
--conversation | --both]`` (``--cell ID``: the latest turn of that ``%%forge`` cell) takes back
what that turn and the later ones changed. The page's "Revert to here" buttons (the cell
record, a turn in the side panel) run the same line in the kernel after the person chose.

Cells are taken back through the page (``revert-cells`` → ``cells-reverted``), as Reject does,
which means waiting for the page's answer — so in a kernel a ``%forge revert`` line is rewritten
into a top-level ``await`` (revert_line.py), as ``%%forge`` cells are. Where nothing
can wait for a page (terminal IPython, ``run_line_magic``), files and the conversation are
reverted and the cells are said to be left.
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
from typing import Any

from IPython.core.error import UsageError

from ..errors import ForgeError
from ..ids import short
from ..session import revert as core

USAGE = ("usage: %forge revert [TURN | MESSAGE_ID | --cell CELL_ID] [--code | --conversation | "
         "--both]  (no TURN: list the turns; TURN -1 is the last; default --both)")
PAGE_WAIT = 10.0  # seconds the page has to take the cells back
NO_PAGE = ("no notebook page with forge-jupyter's extension is attached to this kernel, so the "
           "cells were not touched")
_WORDS = {"restored": "restored", "already": "already as it was before (rejected in review, or "
          "undone)", "changed": "you changed it since, so it was left as it is",
          "missing": "no longer in the notebook, so it was left"}
_KINDS = {"insert": "inserted cell", "edit": "edited cell", "delete": "deleted cell",
          "move": "moved cell"}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="%forge revert", add_help=False, exit_on_error=False)
    p.add_argument("turn", nargs="?")
    p.add_argument("--cell")
    how = p.add_mutually_exclusive_group()
    for mode in core.MODES:
        how.add_argument(f"--{mode}", dest="mode", action="store_const", const=mode)
    return p


def _options(line: str) -> argparse.Namespace:
    try:
        opts = _parser().parse_args(shlex.split(line))
    except (argparse.ArgumentError, ValueError) as exc:
        raise UsageError(f"{exc}\n{USAGE}") from None
    except SystemExit:  # argparse's own exit on a bad option (older Pythons)
        raise UsageError(USAGE) from None
    if opts.turn and opts.cell:
        raise UsageError(f"give a TURN or --cell, not both\n{USAGE}")
    opts.mode = opts.mode or "both"
    return opts


def listing(controller: Any) -> Any:
    """The current session's turns, numbered as ``%forge revert N`` takes them, with how many
    file and cell changes each made."""
    import pandas as pd

    session = controller.current()
    messages = session.messages()
    listed = core.turns(messages)
    if not listed:
        print("This session has no turns to revert to yet.")
        return None
    turn_of: dict[str, int] = {}
    number = 0
    for pos, m in enumerate(messages):
        number = next((t.number for t in listed if t.position == pos), number)
        turn_of[m.id] = number
    files, cells = core.checkpoints(session.forge.store, messages, listed[0])
    count = {t.number: [0, 0] for t in listed}
    for i, events in enumerate((files, cells)):
        for e in events:
            n = turn_of.get(e.data.get("message_id"))
            if n in count:
                count[n][i] += 1
    rows = [(t.number, short(t.message_id), core.first_line(t.prompt).strip("“”"),
             *count[t.number]) for t in listed]
    return pd.DataFrame(rows, columns=["turn", "message", "prompt", "files", "cells"]
                        ).set_index("turn")


async def revert(controller: Any, line: str, *, page: bool = True, by: str = "user") -> Any:
    """Run ``%forge revert LINE``; prints what was restored and what was not."""
    opts = _options(line)
    if not opts.turn and not opts.cell:
        return listing(controller)
    try:
        report = await take_back(controller, opts.turn, opts.cell, opts.mode, page=page, by=by)
    except ForgeError as exc:
        raise UsageError(str(exc)) from None
    print("\n".join(report.lines()))
    return None


async def take_back(controller: Any, which: str | None, cell_id: str | None, mode: str, *,
                    page: bool = True, by: str = "user") -> core.Report:
    """Revert the notebook's current session to the turn ``which`` (or ``cell_id``'s)."""
    session = controller.current()
    if session.running:
        raise ForgeError("A turn of this session is still running: stop it first (%forge stop "
                         "or the Stop button), then revert.")
    messages = await asyncio.to_thread(session.messages)
    turn = _cell_turn(messages, cell_id) if cell_id else core.find_turn(messages, which or "")
    report = core.Report(turn, mode)
    if mode != "conversation":
        files, cells = core.checkpoints(session.forge.store, messages, turn)
        if cells:
            await _cells(cells, report, page)
        if files:
            await asyncio.to_thread(core.restore_files, session.forge.store, session.id,
                                    session.info.directory, files, report)
    if mode != "code":
        fork = await asyncio.to_thread(core.fork_before, session, turn)
        controller.use(fork)
        report.session_id = fork.id
    else:  # the conversation keeps those turns: the model is told, with the next prompt
        controller.revert_note = core.note_for_model(report)
    await asyncio.to_thread(core.record, session, report, by)
    return report


def _cell_turn(messages: list[Any], cell_id: str) -> core.Turn:
    listed = core.turns(messages)
    by_id = {m.id: m for m in messages}
    for t in reversed(listed):
        origin = by_id[t.message_id].origin or {}
        if origin.get("cell_id") == cell_id:
            return t
    raise ForgeError(f"No turn of this notebook's current session ran in cell {cell_id!r}: "
                     "%forge revert lists the turns.")


def steps_of(cells: list[Any]) -> tuple[list[dict[str, Any]], list[str]]:
    """The page's ``revert-cells`` steps, newest first, and what cannot be taken back."""
    steps, unkept = [], []
    for e in cells:
        d = e.data
        if d.get("unrestorable"):
            unkept.append(f"{_KINDS.get(d.get('edit'), 'cell')} {d.get('cell_id')}: its earlier "
                          f"state was not kept ({d['unrestorable']})")
            continue
        steps.append({"change_id": str(d.get("change_id", "")), "edit": d.get("edit"),
                      "cell_id": str(d.get("cell_id", "")), "after": d.get("after"),
                      "before": d.get("before"), "index": int(d.get("index") or 0),
                      "from_index": int(d.get("from") or 0),
                      "previous": str(d.get("previous") or ""), "cell": d.get("cell")})
    return steps, unkept


async def _cells(cells: list[Any], report: core.Report, page: bool) -> None:
    from .panel import HUB

    steps, unkept = steps_of(cells)
    report.left += unkept
    if not steps:
        return
    future = HUB.request_edit({"steps": steps}, kind="revert-cells") if page else None
    if future is None:
        report.left.append(f"{len(steps)} cell change{'s' if len(steps) != 1 else ''}: {NO_PAGE}")
        return
    try:
        reply = await asyncio.wait_for(asyncio.wrap_future(future), PAGE_WAIT)
    except TimeoutError:
        HUB.forget_edit(future)
        report.left.append(f"the cells: the notebook's page did not answer within {PAGE_WAIT:g} s")
        return
    if isinstance(reply, str) or not reply.ok:
        why = reply if isinstance(reply, str) else reply.error
        report.left.append(f"the cells: {why or 'the page refused'}")
        return
    by_change = {s["change_id"]: s for s in steps}
    for change_id, outcome, detail in reply.outcomes:
        s = by_change.get(change_id)
        if s is None:
            continue
        what = f"{_KINDS.get(s['edit'], 'cell')} {s['cell_id']}"
        words = _WORDS[outcome] + (f" ({detail})" if detail else "")
        (report.restored if outcome in ("restored", "already") else report.left).append(
            f"{what}: {words}" if outcome != "restored" else what)


def revert_sync(controller: Any, line: str) -> Any:
    """``%forge revert`` where it cannot await the page (terminal IPython, run_line_magic)."""
    from ..session.prompt import run_sync

    return run_sync(lambda: revert(controller, line, page=False))
