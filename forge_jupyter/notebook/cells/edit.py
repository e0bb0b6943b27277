"""The cell tools' ``NotebookEditor`` (tools/notebook_edit.py): a change goes to the page over
the side panel's comm (``edit-cell`` → ``cell-edited``, notebook/ops.py), with a bounded wait;
a cell to run is found and run by ``run.py`` (notebook_run), which knows the cells written here.

The page applies it through JupyterLab's notebook model and stages it for review
(labextension/src/cells/); the person's decisions come back as ``cell-reviewed`` and are
recorded as ``cell.reviewed`` events of the session (review.py), like the answers to approvals.
Nothing here touches the ``.ipynb`` file: with no page attached the change is refused.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable
from typing import Any

from ...errors import ToolError
from ...tools.base import ToolContext
from ...tools.notebook_edit import ID_HINT, NEEDS_PAGE, CellChange, CellEdited, CellRan, CellToRun

EDIT_WAIT = 10.0  # seconds the page has to apply one change


class CellEditor:
    def __init__(self, auto_accept: Callable[[], bool], shell: Any,
                 run_wait: Callable[[], float]) -> None:
        from .run import CellRunner

        self.auto_accept = auto_accept
        # cell id → (session, source) of the cells the agent inserted (and its edits of them):
        # notebook_run runs one unchanged since like a python call (cells/run.py); any other
        # cell, an existing one the agent edited included, asks the person
        self.written: dict[str, tuple[str, str]] = {}
        self.runner = CellRunner(shell, self.written, run_wait)

    async def find(self, cell_id: str, session_id: str) -> CellToRun:
        return await self.runner.find(cell_id, session_id)

    async def run(self, cell: CellToRun, ctx: ToolContext) -> CellRan:
        return await self.runner.run(cell, ctx)

    async def apply(self, change: CellChange, session_id: str) -> CellEdited:
        from ..panel import HUB, proto

        change_id = "chg_" + secrets.token_hex(8)
        future = HUB.request_edit({
            "edit": change.kind, "change_id": change_id, "session_id": session_id,
            "cell_id": change.cell_id, "anchor_id": change.anchor_id, "place": change.place,
            "cell_type": change.cell_type, "source": change.source,
            "auto_accept": self.auto_accept()})
        if future is None:
            raise ToolError(NEEDS_PAGE)
        try:
            reply = await asyncio.wait_for(asyncio.wrap_future(future), EDIT_WAIT)
        except TimeoutError:
            HUB.forget_edit(future)
            raise ToolError(f"The notebook's page did not apply the change within {EDIT_WAIT:g} s "
                            "(closed, reloading, or busy); it may still arrive — call "
                            "notebook_read to see the cells before trying again.") from None
        if isinstance(reply, str):  # the page went away meanwhile
            raise ToolError(f"Nothing was changed: {reply}. Ask the person to open the notebook "
                            "in JupyterLab again if cells should still change.")
        assert isinstance(reply, proto.CellEditedReply)
        if not reply.ok:
            hint = f" {ID_HINT}" if "no cell" in reply.error else ""
            raise ToolError(f"The notebook did not take that change: {reply.error or 'no reason given'}."
                            f"{hint}")
        if change.kind == "insert" or (change.kind == "edit" and reply.cell_id in self.written):
            self.written[reply.cell_id] = (session_id, change.source)
        elif change.kind == "delete":
            self.written.pop(change.cell_id, None)
        return CellEdited(reply.cell_id, reply.index, reply.staged, change_id, reply.before)
