"""The small note each prompt carries about where the person is (docs/notebook-context.md):
the notebook's name, how many cells, which cell the prompt came from, what ran since the last
turn and, when the last run failed, its error's type, message and last frames — read from the
run log and the saved file's cell list, never by running anything. ``NOTE_CHARS`` bounds it;
the setting ``notebook_context`` turns it off."""

from __future__ import annotations

import os
from typing import Any

from .budget import NOTE_CHARS, cut
from .document import read_saved
from .outputs import Scrub, clean
from .run_log import RunLog, RunRecord

RUNS_LISTED = 8  # executions the note names; more are counted


class SavedIndex:
    """The saved file's cell ids and sources, read again only when the file changed."""

    def __init__(self) -> None:
        self._key: tuple[str, float] | None = None
        self._ids: list[str | None] = []
        self.sources: list[str] = []

    def ids(self, path: str) -> list[str | None] | None:
        try:
            key = (path, os.path.getmtime(path))
        except OSError:
            return None
        if key != self._key:
            saved = read_saved(path)
            if isinstance(saved, str):
                return None
            self._key, self._ids = key, [c.id for c in saved[0]]
            self.sources = [c.source.strip() for c in saved[0]]
        return self._ids


def _run(r: RunRecord) -> str:
    return f"In [{r.execution_count}] {'ok' if r.ok else 'failed'}"


def context_note(path: str | None, origin: dict[str, Any], log: RunLog, index: SavedIndex,
                 scrub: Scrub) -> str:
    """The note for a prompt from ``origin`` (the cell's id and execution count)."""
    name = os.path.basename(path) if path else "(not saved yet, no file name)"
    ids = index.ids(path) if path else None
    where = f"Notebook {name}" + (f", {len(ids)} cells (as last saved)" if ids is not None else "")
    lines = [f"[Notebook context, written by forge: {where}."]
    running = log.current()
    cell_id = origin.get("cell_id")
    # the run log's count: taken when the cell began (the shell's may have moved on)
    count = running.execution_count if running is not None else origin.get("execution_count")
    if origin.get("surface") == "panel":
        lines.append("This prompt came from the side panel.")
    else:
        pos = ids.index(cell_id) if ids is not None and cell_id in ids else None
        if pos is None and ids is not None and running is not None:  # no id (nbclient)
            same = [i for i, s in enumerate(index.sources) if s == running.source.strip()]
            pos = same[0] if len(same) == 1 else None
        at = [f"#{pos}" if pos is not None else None, f"id {cell_id}" if cell_id else None,
              f"In [{count}]" if count else None]
        lines.append("This prompt is cell " + (" · ".join(a for a in at if a) or "(unknown)") + ".")
    runs = log.since_last_turn()
    if runs:
        named = ", ".join(_run(r) for r in runs[-RUNS_LISTED:])
        more = f" (and {len(runs) - RUNS_LISTED} earlier)" if len(runs) > RUNS_LISTED else ""
        lines.append(f"Ran since the last turn: {named}{more}.")
    else:
        lines.append("No cells ran since the last turn.")
    error = log.last_error()
    if error is not None:
        lines.append(f"The last run failed: {error.line()}")
        lines += [f"  {f}" for f in error.frames]
    lines.append("notebook_read reads cells and outputs.]")
    text = clean("\n".join(lines), scrub)
    shown = cut(text, NOTE_CHARS, "notebook context")
    return shown.text + (f"\n{shown.note}]" if shown.note else "")
