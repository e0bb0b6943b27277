"""What ran in this kernel and how it ended, from IPython's own events — nothing is re-run.

``%load_ext`` installs one ``RunLog`` on the shell (``pre_run_cell`` / ``post_run_cell``): each
execution's count, cell id, start and end time and, when it failed, the error's type, message
and last frames, summarized at once (the exception itself is not kept: its frames would hold
the cell's locals alive). Cells that ran before forge was loaded are known from ``In``/``Out``
only; the last of their errors from ``sys.last_value``.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

from .budget import TRACEBACK_FRAMES

RUNS_KEPT = 10_000  # executions remembered; older ones fall off
SOURCE_KEPT = 100_000  # characters of a cell's source a record keeps


@dataclass(frozen=True)
class ErrorSummary:
    """A failed execution's error: type, message and the last frames, each one line."""

    ename: str
    evalue: str
    frames: list[str] = field(default_factory=list)

    def line(self) -> str:
        return f"{self.ename}: {self.evalue}" if self.evalue else self.ename


@dataclass
class RunRecord:
    execution_count: int | None
    cell_id: str | None
    started: float
    ended: float | None = None
    ok: bool | None = None  # None while it runs
    error: ErrorSummary | None = None
    forge: bool = False  # a %%forge cell (a prompt, not the person's code)
    source: str = ""  # the cell as written (``In`` holds it as IPython transformed it)


def _where(filename: str, shell: Any) -> str:
    """A frame's file as a person reads it: ``In [N]`` for a cell of this kernel."""
    count = getattr(getattr(shell, "compile", None), "_filename_map", {}).get(filename)
    return f"In [{count}]" if isinstance(count, int) else filename


def summarize_error(exc: BaseException, shell: Any = None) -> ErrorSummary:
    """``exc`` as type, message (one bounded line) and its last ``TRACEBACK_FRAMES`` frames."""
    import IPython

    ipython = os.path.dirname(IPython.__file__) + os.sep
    frames = []
    stack = [f for f in traceback.extract_tb(exc.__traceback__)
             if not f.filename.startswith(ipython)]  # IPython's own run_code frame
    for f in stack[-TRACEBACK_FRAMES:]:
        code = f" → {f.line.strip()[:200]}" if f.line else ""
        frames.append(f"{_where(f.filename, shell)}, line {f.lineno}, in {f.name}{code}")
    try:  # the message is the cell's code's: any size, and its __str__ may itself raise
        text = str(exc)[:2000]
    except Exception as err:  # noqa: BLE001 - an IPython event hook must not raise
        text = f"(its message could not be read: {type(err).__name__})"
    value = " ".join(text.split())
    return ErrorSummary(type(exc).__name__, value[:500] + ("…" if len(value) > 500 else ""),
                        frames)


class RunLog:
    """The executions of one shell, in order, and the count the last forge turn began at."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.runs: list[RunRecord] = []
        self.last_turn_count: int | None = None  # the execution count of the last %%forge cell
        self._lock = threading.Lock()
        self._installed = time.monotonic()
        self._last_end: float | None = None  # of any execution, the %load_ext one included

    def install(self) -> None:
        self._installed = time.monotonic()
        self.shell.events.register("pre_run_cell", self._pre)
        self.shell.events.register("post_run_cell", self._post)

    def uninstall(self) -> None:
        for name, fn in (("pre_run_cell", self._pre), ("post_run_cell", self._post)):
            try:
                self.shell.events.unregister(name, fn)
            except ValueError:
                pass

    def _pre(self, info: Any) -> None:
        raw = getattr(info, "raw_cell", "") or ""
        if getattr(info, "silent", False) or not getattr(info, "store_history", True):
            return  # the front end's own silent executions (completions, widgets)
        # IPython has counted the cell before it says so: the shell's count is the next one's
        count = getattr(self.shell, "execution_count", None)
        record = RunRecord(count - 1 if isinstance(count, int) else None,
                           getattr(info, "cell_id", None), time.time(),
                           forge=raw.lstrip().startswith("%%forge"), source=raw[:SOURCE_KEPT])
        with self._lock:
            self.runs.append(record)
            del self.runs[:-RUNS_KEPT]

    def _post(self, result: Any) -> None:
        with self._lock:
            self._last_end = time.monotonic()
            record = self.runs[-1] if self.runs else None
        if record is None or record.ended is not None:
            return
        record.ended = time.time()
        record.execution_count = getattr(result, "execution_count", record.execution_count)
        exc = getattr(result, "error_in_exec", None) or getattr(result, "error_before_exec", None)
        record.ok = exc is None
        if exc is not None:
            try:
                record.error = summarize_error(exc, self.shell)
            except Exception:  # an exception whose str() fails: still a failure
                record.error = ErrorSummary(type(exc).__name__, "")

    def by_count(self) -> dict[int, RunRecord]:
        with self._lock:
            return {r.execution_count: r for r in self.runs if r.execution_count is not None}

    def before(self, record: RunRecord) -> list[RunRecord]:
        """The executions remembered before ``record``, oldest first."""
        with self._lock:
            runs = list(self.runs)
        return runs[:next((i for i, r in enumerate(runs) if r is record), len(runs))]

    def current(self) -> RunRecord | None:
        """The execution running now (the %%forge cell asking), if any."""
        with self._lock:
            last = self.runs[-1] if self.runs else None
        return last if last is not None and last.ended is None else None

    def idle_for(self) -> float:
        """Seconds since the kernel last finished running a cell; 0 while one runs (the
        %load_ext cell too, which began before this log could see it)."""
        if self.current() is not None:
            return 0.0
        with self._lock:
            end = self._last_end
        if end is None:  # loaded by that cell, still running; or at start-up (--ext), none
            return max(0.0, time.monotonic() - self._installed - 2.0)
        return time.monotonic() - end

    def since_last_turn(self) -> list[RunRecord]:
        """The finished executions after the last forge turn (all of them before the first)."""
        with self._lock:
            runs = list(self.runs)
        start = self.last_turn_count or 0
        return [r for r in runs if r.ended is not None and not r.forge
                and (r.execution_count or 0) > start]

    def last_error(self) -> ErrorSummary | None:
        """The last failed execution's error; before forge was loaded, IPython's last one."""
        with self._lock:
            for r in reversed(self.runs):
                if r.ended is not None and not r.forge:
                    return r.error
        last = getattr(sys, "last_value", None)
        return summarize_error(last, self.shell) if isinstance(last, BaseException) else None
