"""``notebook_run``: run one code cell of the open notebook for the model, its outputs shown in
that cell, and read them back (through notebook_read's summarizing, images included).

While a ``%%forge`` cell runs, the kernel's shell is busy with it: an execute request from the
page would wait behind the turn. So the cell's code runs through the agent's own executor
(tools/python.py's: the kernel's namespace, a tool thread, Stop as KeyboardInterrupt), on the
cell's behalf: the notebook layer (``notebook/cells/run.py``) takes the cell's source from the
page, runs it and sends the outputs to the page as the cell's own, while they come.

Who decides: the source the person is asked about is the one that runs (``Tool.prepare``
fetches it before the permission check). A cell the agent wrote in this session and nobody
changed since is like a ``python`` call (``ask`` in ``build`` unless a rule allows it); any
other cell — the person's own — asks each time, and so does a cell tagged
``forge-ask-before-run`` (the "ask before running" mark), whatever the rules say. ``plan``
does not offer the tool. The wait is bounded (``cell_run_wait``): a longer run answers "still
running" with the outputs so far and goes on, its outputs landing in the cell; Stop (or
``%forge stop``) interrupts it.
"""

from __future__ import annotations

from typing import Any

from ..errors import ToolError
from .base import Prepared, Tool, ToolContext, ToolResult
from .notebook_edit import ASK_TAG, FLAG, NEEDS_PAGE, CellToRun, cell_id_arg


async def _prepare(args: dict[str, Any], ctx: ToolContext) -> Prepared:
    cell_id = cell_id_arg(args, "cell_id")
    if ctx.editor is None:
        raise ToolError(NEEDS_PAGE)
    cell = await ctx.editor.find(cell_id, ctx.session_id)
    if cell.cell_type != "code":
        raise ToolError(f"Cell {cell_id} is a {cell.cell_type} cell: there is no code to run.")
    if not cell.source.strip():
        raise ToolError(f"Cell {cell_id} is empty: there is nothing to run.")
    ask = None
    if cell.marked:
        ask = (f"cell {cell_id} is tagged {ASK_TAG}: the person decides each run of it; ask "
               "them, or tell them what running it would show")
    elif not cell.agent_wrote:
        ask = (f"cell {cell_id} is not one you wrote in this session (or it was changed since): "
               "running the person's cells asks them each time")
    return Prepared(show={"source": cell.source}, ask=ask, state=cell)


async def _run(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    prepared = ctx.prepared
    if prepared is None or not isinstance(prepared.state, CellToRun):  # a direct call
        prepared = await _prepare(args, ctx)
    if ctx.editor is None:
        raise ToolError(NEEDS_PAGE)
    cell = prepared.state
    ran = await ctx.editor.run(cell, ctx)
    if ran.failed:
        raise ToolError(ran.text)
    state = "running" if ran.running else "ran"
    return ToolResult(ran.text, title=f"{state} {cell.cell_id}", images=ran.images,
                      metadata={"cell_id": cell.cell_id, "running": ran.running})


def notebook_run_tool() -> Tool:
    return Tool(
        name="notebook_run",
        description=(
            "Run one code cell of the open notebook in the kernel (the person's namespace), by "
            "the id notebook_read lists; its outputs show in that cell, and you read them "
            "(text, tables, errors; images for a model that takes them). A cell you inserted "
            "runs like python; the person's own cells, and cells tagged "
            f"{ASK_TAG}, ask them first: do not re-run an expensive cell without need. A run "
            "longer than the wait answers 'still running' with the outputs so far and goes "
            "on; read the cell later with notebook_read."),
        parameters={"type": "object", "properties": {"cell_id": {
            "type": "string", "maxLength": 100, "description": "the code cell's id"}},
            "required": ["cell_id"], "additionalProperties": False},
        execute=_run, prepare=_prepare, mutating=True, flag=FLAG, absent=NEEDS_PAGE,
        subject_arg="cell_id", argument="name")
