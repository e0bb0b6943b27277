"""How notebook_run (tools/notebook_run.py) runs one cell of the open notebook for the model
while its ``%%forge`` cell keeps the kernel's shell busy (``CellEditor``, edit.py, owns one).

Measured (docs/notebook-workspace.md, "Running cells"): an execute request on an ipykernel 7
subshell does run beside the busy main shell, but its interrupt is the kernel's, which stops
the ``%%forge`` turn with it, and the page would have to route another shell's messages into
the cell. So the code runs through the agent's own executor (tools/python.py's ``execute``: the
kernel's namespace, a tool thread, Stop as KeyboardInterrupt in that thread), on the cell's
behalf: IPython's input transforms first (magics, ``!cmd``), its outputs gathered as nbformat
outputs and sent to the page as the cell's (``cell-outputs``, applied through JupyterLab's
cell model, so they are saved as the cell's own), at most five times a second while they come.
The model reads them through notebook_read's summarizer (cells/outputs.py).

The wait is bounded (``cell_run_wait``): past it the call answers "still running" with the
outputs so far; the run goes on in its thread, its outputs keep landing in the cell, and Stop
of the turn, or ``%forge stop``, interrupts it.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable
from typing import Any

from ...errors import ToolError
from ...scrub import Scrubber
from ...tools import python_displays as displays
from ...tools.base import ShownImage, ToolContext
from ...tools.notebook_edit import ASK_TAG, ID_HINT, NEEDS_PAGE, CellRan, CellToRun
from ...tools.python import execute, user_traceback
from ...tools.threads import Stop
from .budget import CALL_CHARS, CALL_IMAGES
from .live import live_cells
from .outputs import image_bytes, summarize
from .run_log import RUNS_KEPT

PUSH_EVERY = 0.2  # seconds between two sends of a running cell's outputs
CELL_TEXT = 1_000_000  # characters of printed text a cell keeps; the rest is counted
CELL_DISPLAYS = 50  # displays a cell keeps

_LABELS = {"execute_result": "value", "display_data": "display"}  # the model's line heads
_running: dict[str, tuple[float, Stop]] = {}  # cell id → (started, its stop): runs going on


_ran: dict[str, tuple[float, bool]] = {}  # cell id → (ended, ok) of its last run here


def run_label(cell_id: str | None) -> str | None:
    """How notebook_read lists a cell notebook_run ran (it has no In [N]), or None."""
    if cell_id in _running:
        return "running now (notebook_run)"
    if cell_id not in _ran:
        return None
    ended, ok = _ran[cell_id]
    return f"ran by notebook_run {time.strftime('%H:%M:%S', time.localtime(ended))}, " + (
        "ok" if ok else "failed")


def stop_runs() -> bool:
    """Interrupt every cell run still going on (``%forge stop``); True if there was one."""
    runs = list(_running.values())
    for _started, stop in runs:
        stop.set()
    return bool(runs)


class CellOutputs:
    """A cell's outputs as they come, in nbformat's JSON (from the run's thread and the loop)."""

    def __init__(self) -> None:
        self.outputs: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.dirty = True  # the page has not seen the latest (the cleared outputs, at first)
        self.text = 0  # printed characters kept
        self.dropped = 0  # printed characters past CELL_TEXT
        self.displays = 0

    def stream(self, name: str, text: str) -> None:
        with self.lock:
            room = max(0, CELL_TEXT - self.text)
            kept, self.dropped = text[:room], self.dropped + max(0, len(text) - room)
            self.text += len(kept)
            last = self.outputs[-1] if self.outputs else None
            if kept and last is not None and last.get("name") == name:
                last["text"] += kept
            elif kept:
                self.outputs.append({"output_type": "stream", "name": name, "text": kept})
            self.dirty = True

    def add(self, output: dict[str, Any]) -> None:
        with self.lock:
            if output["output_type"] == "display_data":
                self.displays += 1
                if self.displays > CELL_DISPLAYS:
                    return
            self.outputs.append(output)
            self.dirty = True

    def snapshot(self, sent: bool = True) -> list[dict[str, Any]]:
        """The outputs now (``sent``: to the page, which then has seen them)."""
        with self.lock:
            self.dirty = self.dirty and not sent
            out = [dict(o) for o in self.outputs]
        note = []
        if self.dropped:
            note.append(f"[{self.dropped:,} more characters printed; a cell run by forge keeps "
                        f"the first {CELL_TEXT:,}]\n")
        if self.displays > CELL_DISPLAYS:
            note.append(f"[{self.displays - CELL_DISPLAYS} more displays not kept]\n")
        if note:
            out.append({"output_type": "stream", "name": "stderr", "text": "".join(note)})
        return out


class _CellShown(displays.Shown):
    """What the code displays, kept whole for the cell (the model's lines come from outputs)."""

    def __init__(self, cell: CellOutputs) -> None:
        super().__init__(None, True)
        self.cell = cell

    def add(self, data: dict[str, Any]) -> None:
        self.cell.add(_bundle_output("display_data", data))


def _bundle_output(kind: str, data: dict[str, Any], metadata: Any = None) -> dict[str, Any]:
    bundle = {m: v if isinstance(v, (dict, list)) else displays.bundle_value(m, v)
              for m, v in data.items() if v is not None}
    out = {"output_type": kind, "data": bundle,
           "metadata": metadata if isinstance(metadata, dict) else {}}
    if kind == "execute_result":
        out["execution_count"] = None
    return out


class CellRunner:
    def __init__(self, shell: Any, written: dict[str, tuple[str, str]],
                 wait: Callable[[], float]) -> None:
        self.shell, self.written, self.wait = shell, written, wait

    async def find(self, cell_id: str, session_id: str) -> CellToRun:
        cells = await live_cells([cell_id])
        if cells is None:
            raise ToolError(NEEDS_PAGE)
        if isinstance(cells, str):
            raise ToolError(f"The cell could not be read: {cells}. Nothing was run.")
        cell = next((c for c in cells if isinstance(c, dict) and c.get("id") == cell_id), None)
        if cell is None:
            raise ToolError(f"There is no cell with id {cell_id!r} in this notebook (deleted, "
                            f"re-created, or another notebook's). {ID_HINT}")
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        meta = cell.get("metadata") if isinstance(cell.get("metadata"), dict) else {}
        tags = meta.get("tags") if isinstance(meta.get("tags"), list) else []
        mine = self.written.get(cell_id) == (session_id, source)
        return CellToRun(cell_id, source, str(cell.get("cell_type", "code")), ASK_TAG in tags,
                         mine)

    async def run(self, cell: CellToRun, ctx: ToolContext) -> CellRan:
        from ..panel import HUB

        if cell.cell_id in _running:
            started = _running[cell.cell_id][0]
            raise ToolError(f"Cell {cell.cell_id} is still running (started "
                            f"{time.time() - started:.0f} s ago); read its outputs so far with "
                            "notebook_read, or wait for it before running it again.")
        try:
            code = self.shell.transform_cell(cell.source)  # magics and !commands, as a cell
        except Exception as exc:
            raise ToolError(f"Cell {cell.cell_id} could not be read as IPython code: {exc}") from None
        outputs, stop = CellOutputs(), Stop()
        _running[cell.cell_id] = (time.time(), stop)
        task = asyncio.ensure_future(execute(code, ctx.namespace, outputs.stream,
                                             _CellShown(outputs), stop, tool="notebook_run"))
        pusher = asyncio.ensure_future(self._push(cell.cell_id, outputs, task, stop, ctx))
        wait = max(0.0, float(self.wait()))
        try:
            done, _ = await asyncio.wait({task}, timeout=wait)
        except asyncio.CancelledError:  # Stop, or the call's timeout: the run stops with it
            stop.set()
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(asyncio.shield(pusher), 6.0)
            raise
        if not done:
            if not HUB.attached:  # nobody sees its outputs land: it does not go on unseen
                stop.set()
            so_far = outputs.snapshot(sent=False)
            return CellRan(self._told(cell.cell_id, so_far, ctx, running=True)[0], running=True)
        await asyncio.shield(pusher)
        if task.exception() is not None:  # it never ran (no tool thread to be had)
            raise task.exception()
        told, images, failed = self._told(cell.cell_id, outputs.snapshot(sent=False), ctx)
        return CellRan(told, images, failed=failed)

    async def _push(self, cell_id: str, outputs: CellOutputs, task: asyncio.Future[Any],
                    stop: Stop, ctx: ToolContext) -> None:
        """Send the outputs while they come, then the last of them with the run's end."""
        from ..panel import HUB

        try:
            while not task.done():
                if outputs.dirty:
                    HUB.send_outputs(cell_id, outputs.snapshot(), running=True)
                if ctx.run is not None and ctx.run.aborted:  # Stop after the wait ended
                    stop.set()
                await asyncio.wait({task}, timeout=PUSH_EVERY)
            with contextlib.suppress(BaseException):
                _finish(outputs, task.result(), self.shell)
        finally:
            _running.pop(cell_id, None)
            _ran.pop(cell_id, None)  # the newest last, the oldest forgotten past RUNS_KEPT
            _ran[cell_id] = (time.time(), not any(o["output_type"] == "error"
                                                  for o in outputs.outputs))
            while len(_ran) > RUNS_KEPT:
                del _ran[next(iter(_ran))]
            HUB.send_outputs(cell_id, outputs.snapshot(), running=False)

    def _told(self, cell_id: str, outputs: list[dict[str, Any]], ctx: ToolContext,
              running: bool = False) -> tuple[str, list[ShownImage], bool]:
        scrub = ctx.run.writer.scrubber if ctx.run is not None else Scrubber.from_environment()
        lines, images, failed = [], [], False
        for output in outputs:
            s = summarize(output, scrub)
            label = output.get("name") if s.kind == "stream" else _LABELS.get(s.kind, s.kind)
            lines.append(f"[{label}] {s.text}".rstrip())
            lines.extend(s.notes)
            failed = failed or s.error is not None
            for ref in s.images:
                data = image_bytes(output, ref.mime)
                if data is not None and len(images) < CALL_IMAGES and ref.mime != "image/svg+xml":
                    images.append(ShownImage(data, ref.mime, ref.describe()))
        body = "\n".join(lines) or "(no output)"
        if len(body) > CALL_CHARS:
            body = body[:CALL_CHARS] + f"\n[… cut at {CALL_CHARS:,} characters]"
        if running:
            head = (f"Cell {cell_id} is still running after {self.wait():g} s (cell_run_wait); "
                    "its outputs keep landing in the cell. Outputs so far:")
        else:
            head = f"Ran cell {cell_id}; its outputs are in the cell:"
        return f"{head}\n{body}", images, failed and not running


def _finish(outputs: CellOutputs, box: dict[str, Any], shell: Any) -> None:
    """The run's end as outputs: its value (an execute_result) or what it raised."""
    error = box.get("error")
    if error is not None:
        name = type(error).__name__
        trace = (["KeyboardInterrupt: the run was stopped"] if isinstance(error, KeyboardInterrupt)
                 else user_traceback(error).rstrip().splitlines())
        outputs.add({"output_type": "error", "ename": name, "evalue": str(error),
                     "traceback": trace})
        return
    value = box.get("value")
    if value is None or box.get("value_shown"):
        return
    data, metadata = shell.display_formatter.format(value)
    if data:
        outputs.add(_bundle_output("execute_result", data, metadata))
