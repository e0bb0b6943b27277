"""The cells of the current notebook, from the best source there is, and which one that was.

1. The live document: the cells as the page holds them (unsaved edits included), sent by the
   labextension over the panel's comm (``live`` is given them).
2. Else the saved ``.ipynb`` the kernel knows (``__session__`` / ``JPY_SESSION_NAME``), joined
   with the kernel's own history: which saved cell ran here as ``In [N]`` (by cell id from the
   run log, else by identical source), and what ran here that the file does not hold yet.
3. A notebook with no path (never saved, a plain IPython) is its kernel history alone.
"""

from __future__ import annotations

import ast
import json
import os
import re
import reprlib
import stat
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from .budget import OUTPUT_CHARS, SAVED_BYTES
from .outputs import joined
from .run_log import RunLog, RunRecord

Origin = Literal["live", "saved", "kernel"]
SOURCES: dict[Origin, str] = {
    "live": "the live notebook in JupyterLab (unsaved edits included)",
    "saved": "the saved notebook file and this kernel's history (unsaved edits not seen)",
    "kernel": "this kernel's history only (the notebook has no saved file forge can read)",
}
_repr = reprlib.Repr()
_repr.maxstring = _repr.maxother = OUTPUT_CHARS
_repr.maxlist = _repr.maxtuple = _repr.maxdict = _repr.maxset = 50


@dataclass
class Cell:
    """One cell as the agent reads it; outputs are nbformat output dicts (untrusted)."""

    index: int | None  # position in the document; None: ran here, not in the saved file
    id: str | None
    type: str  # code, markdown, raw
    source: str
    execution_count: int | None = None
    outputs: list[Any] = field(default_factory=list)
    run: RunRecord | None = None  # its last execution in this kernel, when known
    ran_here: bool = False  # its source ran in this kernel (as In [execution_count])
    notes: list[str] = field(default_factory=list)


@dataclass
class NotebookDoc:
    origin: Origin
    path: str | None
    cells: list[Cell]
    notes: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return os.path.basename(self.path) if self.path else "(unsaved notebook)"

    @property
    def source(self) -> str:
        return SOURCES[self.origin]


def _cell(index: int | None, raw: Any) -> Cell | None:
    if not isinstance(raw, dict):
        return None
    count = raw.get("execution_count")
    outputs = raw.get("outputs")
    return Cell(index, str(raw["id"])[:100] if raw.get("id") else None,
                str(raw.get("cell_type", "code"))[:20], joined(raw.get("source", "")),
                count if isinstance(count, int) and not isinstance(count, bool) else None,
                outputs if isinstance(outputs, list) else [])


def cells_of(raw_cells: Any) -> list[Cell]:
    """nbformat cell dicts (the file's or the page's) as ``Cell``s, in order."""
    if not isinstance(raw_cells, list):
        return []
    return [c for i, raw in enumerate(raw_cells) if (c := _cell(i, raw)) is not None]


def load_saved(path: str) -> dict[str, Any] | str:
    """The saved file's JSON (untrusted), or why it could not be read. Only a regular file of
    at most ``SAVED_BYTES`` is opened: a FIFO or a device would block or never end."""
    try:
        # opened without blocking, then checked on the descriptor: a path swapped for a FIFO
        # between a check and the open cannot hang the kernel
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):
                return "the notebook's path is not a regular file"
            if st.st_size > SAVED_BYTES:
                return (f"the saved file is {st.st_size / 2**20:,.0f} MB, more than forge reads "
                        f"({SAVED_BYTES // 2**20} MB)")
            raw = f.read(SAVED_BYTES + 1)  # bounded even if it grew since
        if len(raw) > SAVED_BYTES:
            return f"the saved file is more than forge reads ({SAVED_BYTES // 2**20} MB)"
        nb = json.loads(raw.decode("utf-8", errors="replace"))
        return nb if isinstance(nb, dict) else "the saved file is not a notebook"
    except FileNotFoundError:
        return "the notebook has not been saved yet"
    except (OSError, ValueError, RecursionError) as exc:
        return f"the saved file could not be read ({type(exc).__name__})"


def read_saved(path: str) -> tuple[list[Cell], float] | str:
    """The saved file's cells and its modification time, or why they could not be read."""
    nb = load_saved(path)
    if isinstance(nb, str):
        return nb
    try:
        return cells_of(nb.get("cells")), os.path.getmtime(path)
    except OSError as exc:
        return f"the saved file could not be read ({type(exc).__name__})"


def _bundle(value: Any, namespace: dict[str, Any]) -> dict[str, Any]:
    """The MIME bundle IPython showed for ``value`` (its display formatter), else a repr."""
    shell = namespace.get("get_ipython")
    try:
        formatter = shell().display_formatter if callable(shell) else None
        if formatter is not None:
            data, _meta = formatter.format(value)
            if isinstance(data, dict) and data:
                return data
        return {"text/plain": _repr.repr(value)}
    except Exception as exc:  # a repr that fails says so rather than failing the read
        return {"text/plain": f"[its value's repr failed: {type(exc).__name__}]"}


def _kernel_output(count: int, out: dict[Any, Any], run: RunRecord | None,
                   namespace: dict[str, Any]) -> list[dict[str, Any]]:
    outputs: list[dict[str, Any]] = []
    if count in out:
        outputs.append({"output_type": "execute_result", "execution_count": count,
                        "data": _bundle(out[count], namespace)})
    if run is not None and run.error is not None:
        e = run.error
        outputs.append({"output_type": "error", "ename": e.ename, "evalue": e.evalue,
                        "traceback": ["Traceback (last frames):", *e.frames, e.line()]})
    return outputs


def _same(a: str, b: str) -> bool:
    return a.strip() == b.strip()


FORGE_CALL = re.compile(r"^await get_ipython\(\)\._forge_magics\.run_cell\((.*)\)\s*$", re.S)


LINE_MAGIC = re.compile(r"^([ \t]*)get_ipython\(\)\.run_line_magic\(('[^'\n]*'), ('[^'\n]*')\)$", re.M)


def _line_magic(m: re.Match[str]) -> str:
    try:
        name, arg = ast.literal_eval(m.group(2)), ast.literal_eval(m.group(3))
    except (ValueError, SyntaxError):
        return m.group(0)
    return f"{m.group(1)}%{name} {arg}".rstrip()


def as_written(source: str) -> str:
    """A history entry as the person wrote it: a %%forge cell, not the await it became."""
    m = FORGE_CALL.match(source)
    if m is None:
        return LINE_MAGIC.sub(_line_magic, source)
    try:
        line, body = ast.literal_eval(f"({m.group(1)})")
    except (ValueError, SyntaxError, TypeError):
        return source
    return f"%%forge {line}".rstrip() + "\n" + body


def executions(namespace: dict[str, Any], runs: dict[int, RunRecord]) -> list[str]:
    """This kernel's inputs as written, by execution count (index 0 empty, as ``In``)."""
    history = namespace.get("In")
    inputs = [s if isinstance(s, str) else "" for s in history] if isinstance(history, list) else [""]
    return [runs[n].source if n in runs and runs[n].source else as_written(s)
            for n, s in enumerate(inputs)]


def join_history(cells: list[Cell], namespace: dict[str, Any], log: RunLog | None,
                 saved_at: float | None) -> list[Cell]:
    """The document's cells told what ran in this kernel, plus what ran here that they lack."""
    runs = log.by_count() if log is not None else {}
    inputs = executions(namespace, runs)
    out = namespace.get("Out") if isinstance(namespace.get("Out"), dict) else {}
    by_id = {r.cell_id: r for r in runs.values() if r.cell_id}  # the newest run of each cell
    placed: set[int] = set()
    for cell in cells:
        if cell.type != "code":
            continue
        run = by_id.get(cell.id) if cell.id else None
        count = run.execution_count if run is not None else cell.execution_count
        if run is None and (count is None or not 0 < count < len(inputs)
                            or not _same(inputs[count], cell.source)):
            # no id from the front end (nbclient, a script): its latest identical input
            count = next((n for n in range(len(inputs) - 1, 0, -1)
                          if n not in placed and _same(inputs[n], cell.source)), count)
        if count is None or not 0 < count < len(inputs) or not _same(inputs[count], cell.source):
            if run is not None and count is not None and 0 < count < len(inputs):
                cell.notes.append(f"edited since it ran as In [{count}]")
                placed.add(count)
            continue
        cell.ran_here, cell.run, cell.execution_count = True, runs.get(count), count
        placed.add(count)
        if saved_at is not None and cell.run is not None and (cell.run.ended or 0) > saved_at:
            # ran after the file was written: the kernel's result, not the stale saved one
            cell.outputs = _kernel_output(count, out, cell.run, namespace)
            cell.notes.append("ran after the file was saved: its result from the kernel "
                              "(printed output is not kept by the kernel)")
    extra = [Cell(None, runs[n].cell_id if n in runs else None, "code", inputs[n], n,
                  _kernel_output(n, out, runs.get(n), namespace), runs.get(n), True,
                  ["ran in this kernel; not in the saved file"])
             for n in range(1, len(inputs)) if n not in placed and inputs[n].strip()
             and not any(_same(inputs[n], c.source) for c in cells)]
    return cells + extra


def read_document(path: str | None, namespace: dict[str, Any], log: RunLog | None,
                  live: list[Any] | None = None) -> NotebookDoc:
    """The notebook from the best source there is (module docstring)."""
    if live is not None:
        cells = cells_of(live)
        for cell in cells:  # the page knows the document; the kernel knows when a cell ran
            runs = log.by_count() if log is not None else {}
            cell.run = runs.get(cell.execution_count) if cell.execution_count else None
            cell.ran_here = cell.run is not None
        return NotebookDoc("live", path, cells)
    if path:
        saved = read_saved(path)
        if not isinstance(saved, str):
            cells, mtime = saved
            doc = NotebookDoc("saved", path, join_history(cells, namespace, log, mtime))
            doc.notes.append(f"saved file written {time.strftime('%H:%M:%S', time.localtime(mtime))}")
            return doc
        why = saved
    else:
        why = "the notebook has no path (not saved yet, or not a notebook)"
    doc = NotebookDoc("kernel", path, join_history([], namespace, log, None))
    doc.notes.append(why)
    return doc
