"""Checkpoints for "Revert to here" (session/revert.py): before a step's change to a file or a
cell is kept, what was there before it, as an event row of the session keyed by the tool call.

``file.changed``: written by the file tools (write, edit, apply_patch, through ``write.Target``)
once the file changed — its path under the root, its bytes before (or that it did not exist)
and a hash of what the agent left, so a revert can tell the person's later edits from the
agent's. ``cell.changed``: written by the cell tools with what the page reported was there
before the change (the previous source, position, or the whole deleted cell).

What is kept is bounded and never a secret: a file over ``MAX_KEPT`` bytes, one that is not
UTF-8 text, or one whose text the scrubber would change (it holds a key) is recorded as "not
restorable", with why — the store holds no copy of it, and a revert says so.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from ..message import Event

if TYPE_CHECKING:
    from .base import ToolContext
    from .notebook_edit import CellChange, CellEdited

FILE_EVENT = "file.changed"
CELL_EVENT = "cell.changed"
# the person's (or cell_auto_accept's) decision on a cell change (notebook/cells/review.py)
REVIEW_EVENT = "cell.reviewed"
MAX_KEPT = 256 * 1024  # bytes of a file (characters of a cell's JSON) a checkpoint keeps


def digest(data: bytes | None) -> str | None:
    """What a revert compares the file as it is now with: None for "absent"."""
    return None if data is None else hashlib.sha256(data).hexdigest()


def _keepable(ctx: ToolContext, text: str) -> str | None:
    """Why ``text`` cannot be kept (None: it can)."""
    if len(text) > MAX_KEPT:
        return f"too big to keep ({len(text):,} characters; a checkpoint keeps {MAX_KEPT:,})"
    scrubber = ctx.run.writer.scrubber if ctx.run is not None else None
    if scrubber is not None and scrubber.data(text) != text:
        return "it held what looks like a secret, which the history never stores"
    return None


def file_changed(ctx: ToolContext, tool: str, base: str, rel: str, before: bytes | None,
                 after: bytes | None) -> None:
    """A file tool changed ``rel`` (under ``base``, the root) from ``before`` to ``after``
    (None: absent): its checkpoint, an event row of the session written with the call's."""
    if ctx.run is None:
        return  # a direct call outside a run: no session to revert
    data: dict[str, Any] = {"path": rel, "root": base, "tool": tool, "message_id": ctx.message_id,
                            "part_id": ctx.part_id, "call_id": ctx.call_id,
                            "existed": before is not None, "after": digest(after)}
    if before is not None:
        if len(before) > MAX_KEPT:
            data["unrestorable"] = (f"too big to keep ({len(before):,} bytes; a checkpoint keeps "
                                    f"{MAX_KEPT:,})")
        else:
            try:
                text = before.decode("utf-8")
            except UnicodeDecodeError:
                data["unrestorable"] = "it was not UTF-8 text"
            else:
                why = _keepable(ctx, text)
                if why:
                    data["unrestorable"] = why
                else:
                    data["before"] = text
    ctx.run.writer.record(Event(session_id=ctx.session_id, type=FILE_EVENT, actor="agent",
                                data=data))


def cell_changed(ctx: ToolContext, change: CellChange, done: CellEdited) -> None:
    """A cell tool's change as the page applied it, with what was there before (the page's
    ``before``): its checkpoint, an event row of the session."""
    if ctx.run is None:
        return
    before = dict(done.before)
    data: dict[str, Any] = {"edit": change.kind, "change_id": done.change_id,
                            "cell_id": done.cell_id, "index": done.index,
                            "message_id": ctx.message_id, "part_id": ctx.part_id,
                            "call_id": ctx.call_id}
    if change.kind in ("insert", "edit"):
        data["after"] = change.source
    if change.kind == "edit":
        data["before"] = before.get("source")
    if change.kind in ("move", "delete"):
        data["from"] = before.get("index")
    if change.kind == "delete":
        data["previous"] = before.get("previous") or ""
        cell = before.get("cell")
        why = "the page did not send it" if not isinstance(cell, dict) else None
        if isinstance(cell, dict):
            whole = json.dumps(cell)
            why = _keepable(ctx, whole)
            if why and cell.get("outputs"):  # the source, without its outputs, may still fit
                cell = {**cell, "outputs": []}
                why = _keepable(ctx, json.dumps(cell))
                data["outputs_dropped"] = why is None
        if why:
            data["unrestorable"] = why
        else:
            data["cell"] = cell
    for key in ("before", "after"):
        if isinstance(data.get(key), str) and (why := _keepable(ctx, data[key])):
            data[key], data["unrestorable"] = None, why
    ctx.run.writer.record(Event(session_id=ctx.session_id, type=CELL_EVENT, actor="agent",
                                data=data))
