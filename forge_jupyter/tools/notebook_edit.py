"""The cell tools: ``notebook_insert``, ``notebook_edit``, ``notebook_delete``, ``notebook_move``
change the cells of the open notebook, addressed by the ids ``notebook_read`` lists.

The change itself is the notebook layer's (``notebook/cells/edit.py``): it goes to the page,
which applies it through JupyterLab's own notebook model (undo history, saved like the
person's edits) and stages it for review. Forge never writes the ``.ipynb``. The tools are
offered only under the ``cells`` flag, which a ``%%forge`` cell sets while a page with the
extension is attached; elsewhere (nbclient, terminal IPython, VS Code) they are not offered, and
a call that reaches one anyway answers that it needs the extension.

What the model sends is untrusted: ids are checked for shape here and for existence by the page;
a source is refused when it is huge or binary. A cell that calls forge is text like any other
until it runs; run inside a turn (notebook_run), it is refused by the guard of tools/nested.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from ..errors import ToolError
from ..message import Event
from .base import ShownImage, Tool, ToolContext, ToolResult
from .checkpoint import REVIEW_EVENT, cell_changed

FLAG = "cells"
MAX_SOURCE = 100_000  # characters of one cell's source
NEEDS_PAGE = ("The cell tools need JupyterLab or Notebook 7 with forge-jupyter's extension, and "
              "this notebook has no such page attached (nbclient, papermill, VS Code and "
              "terminal IPython have none); nothing was changed. Put the code in your answer or "
              "run it with the python tool instead.")
ID_HINT = ("Cell ids are the `id` values notebook_read lists (call it with no arguments for the "
           "current ones); another notebook's ids do not work here.")
ASK_TAG = "forge-ask-before-run"  # the cell tag: every notebook_run of the cell asks the person
_CELL_ID = re.compile(r"[A-Za-z0-9_-]{1,100}")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")  # not tab, newline, form feed, return

Kind = Literal["insert", "edit", "delete", "move"]
Place = Literal["before", "after", "start", "end"]


@dataclass(frozen=True)
class CellChange:
    """One change the model asked for, its arguments checked."""

    kind: Kind
    cell_id: str = ""  # the cell edited, deleted or moved
    anchor_id: str = ""  # where an insert or move goes, ``place`` it
    place: Place = "end"
    cell_type: str = ""
    source: str = ""


@dataclass(frozen=True)
class CellEdited:
    """What the page did: the cell's id and position after the change, staged or accepted."""

    cell_id: str
    index: int
    staged: bool
    change_id: str
    # what was there before (the page's word): source, index, previous (cell id), cell (JSON)
    before: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CellToRun:
    """One cell as the page holds it now, and what decides whether running it asks."""

    cell_id: str
    source: str
    cell_type: str
    marked: bool  # tagged ASK_TAG
    agent_wrote: bool  # the agent wrote it in this session and nobody changed it since


@dataclass(frozen=True)
class CellRan:
    """What a run showed, as the model reads it."""

    text: str
    images: list[ShownImage] = field(default_factory=list)
    running: bool = False  # still running after the wait: its outputs keep landing in the cell
    failed: bool = False  # it raised (its traceback is in ``text``)


class NotebookEditor(Protocol):
    """Changes and runs the cells of the open notebook (``notebook.cells.edit.CellEditor`` is
    one): applies a change, finds a cell to run, runs it (notebook_run.py); each raises
    ToolError with what to do when it cannot."""

    async def apply(self, change: CellChange, session_id: str) -> CellEdited: ...
    async def find(self, cell_id: str, session_id: str) -> CellToRun: ...
    async def run(self, cell: CellToRun, ctx: ToolContext) -> CellRan: ...


def cell_id_arg(args: dict[str, Any], key: str, required: bool = True) -> str:
    value = args.get(key)
    if value in (None, "") and not required:
        return ""
    if not isinstance(value, str) or not _CELL_ID.fullmatch(value.strip()):
        raise ToolError(f"{key} must be a cell id such as 'a1b2c3d4' (letters, digits, - and _), "
                        f"not {str(value)[:60]!r}. {ID_HINT}")
    return value.strip()


def _source(args: dict[str, Any]) -> str:
    source = args.get("source")
    if not isinstance(source, str):
        raise ToolError("source must be the cell's whole new text, as a string.")
    if len(source) > MAX_SOURCE:
        raise ToolError(f"That source is {len(source):,} characters; a cell may hold at most "
                        f"{MAX_SOURCE:,}. Split it into several cells, or write a file and read it "
                        "from a short cell.")
    if _CONTROL.search(source):
        raise ToolError("That source holds binary control characters (a NUL byte or the like); "
                        "a cell holds text. Write binary data to a file instead.")
    return source


def _place(args: dict[str, Any]) -> tuple[str, Place]:
    after, before = cell_id_arg(args, "after_id", False), cell_id_arg(args, "before_id", False)
    if after and before:
        raise ToolError("Give after_id or before_id, not both.")
    if after or before:
        return (after, "after") if after else (before, "before")
    to = args.get("to", "end")
    if to not in ("start", "end"):
        raise ToolError("to is 'start' or 'end' (or give after_id / before_id).")
    return "", to


def change_of(kind: Kind, args: dict[str, Any]) -> CellChange:
    """The change ``args`` ask for, or ToolError saying what is wrong with them."""
    if kind == "insert":
        cell_type = args.get("cell_type", "code")
        if cell_type not in ("code", "markdown"):
            raise ToolError("cell_type is 'code' or 'markdown'.")
        anchor, place = _place(args)
        return CellChange("insert", "", anchor, place, cell_type, _source(args))
    cell_id = cell_id_arg(args, "cell_id")
    if kind == "edit":
        return CellChange("edit", cell_id, source=_source(args))
    if kind == "delete":
        return CellChange("delete", cell_id)
    anchor, place = _place(args)
    if anchor == cell_id:
        raise ToolError("A cell cannot move next to itself; name another cell.")
    return CellChange("move", cell_id, anchor, place)


_DONE = {"insert": "Inserted", "edit": "Edited", "delete": "Deleted", "move": "Moved"}


def _runner(kind: Kind):
    async def run(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        change = change_of(kind, args)
        if ctx.editor is None:
            raise ToolError(NEEDS_PAGE)
        done = await ctx.editor.apply(change, ctx.session_id)
        cell_changed(ctx, change, done)  # the checkpoint "Revert to here" restores from
        what = f"cell {done.cell_id}" + (f" (now #{done.index})" if done.index >= 0 else "")
        if done.staged:
            tail = ("It is staged for the person's review: they accept or reject it in the "
                    "notebook (rejecting restores what was there).")
        else:
            tail = "Accepted at once (cell_auto_accept is on)."
            if ctx.run is not None:
                ctx.run.writer.record(Event(
                    session_id=ctx.session_id, type=REVIEW_EVENT, actor="forge",
                    data={"change_id": done.change_id, "cell_id": done.cell_id, "edit": kind,
                          "decision": "accepted", "by": "cell_auto_accept"}))
        return ToolResult(f"{_DONE[kind]} {what}. {tail}", title=f"{kind} {done.cell_id}",
                          metadata={"cell_id": done.cell_id, "change_id": done.change_id,
                                    "staged": done.staged})

    return run


_ID = {"type": "string", "maxLength": 100}
_WHERE = {
    "after_id": {**_ID, "description": "put it after this cell"},
    "before_id": {**_ID, "description": "put it before this cell"},
    "to": {"type": "string", "enum": ["start", "end"],
           "description": "with neither id: the notebook's start or end (default end)"},
}


def _tool(name: str, kind: Kind, description: str, properties: dict[str, Any],
          required: list[str]) -> Tool:
    return Tool(name=name, description=description + " Addressed by the cell ids notebook_read "
                "lists. The change goes through JupyterLab (undo works) and waits for the "
                "person's review in the notebook.",
                parameters={"type": "object", "properties": properties, "required": required,
                            "additionalProperties": False},
                execute=_runner(kind), mutating=True, flag=FLAG, absent=NEEDS_PAGE,
                subject_arg="cell_id" if "cell_id" in properties else "cell_type",
                argument="name")


def notebook_edit_tools() -> list[Tool]:
    source = {"type": "string", "description": "the cell's whole text"}  # MAX_SOURCE: said by _source
    cell = {**_ID, "description": "the cell's id"}
    return [
        _tool("notebook_insert", "insert", "Insert a new code or Markdown cell into the open "
              "notebook.", {"source": source, "cell_type": {
                  "type": "string", "enum": ["code", "markdown"], "default": "code"}, **_WHERE},
              ["source"]),
        _tool("notebook_edit", "edit", "Replace the whole source of one cell of the open notebook.",
              {"cell_id": cell, "source": source}, ["cell_id", "source"]),
        _tool("notebook_delete", "delete", "Delete one cell of the open notebook.",
              {"cell_id": cell}, ["cell_id"]),
        _tool("notebook_move", "move", "Move one cell of the open notebook elsewhere in it.",
              {"cell_id": cell, **_WHERE}, ["cell_id"]),
    ]
