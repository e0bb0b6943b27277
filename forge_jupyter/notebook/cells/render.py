"""Cells addressed and printed for the ``notebook_read`` tool, within the budgets of
``budget.py`` — each one that applied is said where it applied."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from ...errors import ToolError
from .budget import CALL_CHARS, CELL_CHARS, LIST_CELLS, SEARCH_HITS, cut
from .document import Cell, NotebookDoc
from .outputs import Scrub, clean, joined, summarize
from .run import run_label

SEARCH_WINDOW = 100_000  # characters of an output a search looks at


@dataclass(frozen=True)
class Address:
    """Which cells a call reads; all None: list them."""

    index: int | None = None
    start: int | None = None
    end: int | None = None
    id: str | None = None
    execution_count: int | None = None
    search: str | None = None

    @classmethod
    def of(cls, args: dict[str, Any]) -> Address:
        return cls(**{k: args.get(k) for k in ("index", "start", "end", "id", "execution_count",
                                               "search")})

    @property
    def listing(self) -> bool:
        return all(v is None for v in (self.index, self.start, self.end, self.id,
                                       self.execution_count, self.search))


def _label(cell: Cell) -> str:
    where = f"#{cell.index}" if cell.index is not None else "(not in the document)"
    bits = [where, cell.type]
    if cell.id:
        bits.append(f"id {cell.id}")
    if cell.execution_count is not None:
        bits.append(f"In [{cell.execution_count}]")
    run = cell.run
    if run is not None and run.ended is not None:
        took = f" in {run.ended - run.started:.1f} s"
        state = "ok" if run.ok else f"failed ({run.error.ename})" if run.error else "failed"
        bits.append(f"ran {time.strftime('%H:%M:%S', time.localtime(run.started))}{took}, {state}")
    elif run is not None:
        bits.append("running now")
    elif cell.type == "code" and cell.execution_count is None:
        bits.append(run_label(cell.id) or "not run")
    elif cell.type == "code" and not cell.ran_here:
        bits.append("not run in this kernel (saved output)")
    return " · ".join(bits + cell.notes)


def _search_text(cell: Cell) -> str:
    parts = [cell.source]
    for o in cell.outputs:
        if isinstance(o, dict):
            data = o.get("data") if isinstance(o.get("data"), dict) else {}
            for value in (o.get("text"), o.get("evalue"), data.get("text/plain"),
                          data.get("text/html"), data.get("text/markdown")):
                if value is not None:
                    parts.append(joined(value)[:SEARCH_WINDOW])
    return "\n".join(parts).lower()


def select(doc: NotebookDoc, address: Address) -> list[Cell]:
    """The cells ``address`` names, or a ToolError saying what exists."""
    cells = doc.cells
    in_doc = [c for c in cells if c.index is not None]
    n = len(in_doc)
    if address.index is not None:
        if not 0 <= address.index < n:
            raise ToolError(f"There is no cell #{address.index}: the notebook has {n} cells "
                            f"(#0 to #{n - 1}).")
        return [in_doc[address.index]]
    if address.id is not None:
        found = [c for c in cells if c.id == address.id]
        if not found:
            raise ToolError(f"No cell has id {address.id!r}. Call notebook_read with no "
                            "arguments to list the cells and their ids.")
        return found
    if address.execution_count is not None:
        found = [c for c in cells if c.execution_count == address.execution_count]
        if not found:
            counts = sorted({c.execution_count for c in cells if c.execution_count is not None})
            raise ToolError(f"No cell ran as In [{address.execution_count}]. Counts known: "
                            f"{', '.join(map(str, counts[-30:])) or 'none'}.")
        return found
    if address.search is not None:
        needle = address.search.lower()
        if not needle.strip():
            raise ToolError("search needs some text to look for in the cells' sources and outputs.")
        return [c for c in cells if needle in _search_text(c)]
    start = address.start if address.start is not None else 0
    end = address.end if address.end is not None else n - 1
    if start < 0 or end < start:
        raise ToolError(f"start and end name cells #0 to #{n - 1}, start ≤ end; got {start}–{end}.")
    return in_doc[start:end + 1]


def render_cell(cell: Cell, scrub: Scrub, outputs: bool = True) -> str:
    """One cell: its label, its source and its outputs, within ``CELL_CHARS``."""
    source = cut(clean(cell.source[:CELL_CHARS * 2], scrub), CELL_CHARS // 2, "source")
    lines = [f"── {_label(cell)} ──", source.text]
    if source.note:
        lines.append(source.note)
    used = len(source.text)
    if outputs and cell.outputs:
        lines.append(f"── outputs ({len(cell.outputs)}) ──")
        for i, raw in enumerate(cell.outputs):
            room = CELL_CHARS - used
            if room < 200:
                lines.append(f"[{len(cell.outputs) - i} more output(s) not shown: the cell's "
                             f"budget of {CELL_CHARS:,} characters is used]")
                break
            s = summarize(raw, scrub, min(room, 2_000))
            text = f"[{s.kind}] {s.text}" + "".join(f"\n{n}" for n in s.notes)
            lines.append(text)
            used += len(text)
    return "\n".join(lines)


def _list_line(cell: Cell, scrub: Scrub) -> str:
    first = next((line.strip() for line in cell.source[:2_000].splitlines() if line.strip()), "")
    first = clean(first, scrub)
    first = first[:100] + ("…" if len(first) > 100 else "")
    outs = f" ({len(cell.outputs)} outputs)" if cell.outputs else ""
    return f"{_label(cell)}: {first}{outs}"


def header(doc: NotebookDoc) -> str:
    count = sum(1 for c in doc.cells if c.index is not None)
    notes = "".join(f"; {n}" for n in doc.notes)
    return f"Notebook {doc.name}: {count} cells. Read from {doc.source}{notes}."


def render(doc: NotebookDoc, address: Address, scrub: Scrub, outputs: bool = True,
           shown: list[Cell] | None = None) -> str:
    """What one notebook_read call returns, within ``CALL_CHARS``; the cells it printed whole
    are appended to ``shown`` (their images go with the result: cells/images.py)."""
    lines = [header(doc)]
    if address.listing:
        cells = doc.cells
        shown = cells[:LIST_CELLS]
        lines += [_list_line(c, scrub) for c in shown]
        if len(cells) > len(shown):
            lines.append(f"[listing cut at {LIST_CELLS} of {len(cells):,} cells: read more with "
                         f"start={LIST_CELLS} and end, or search]")
        body = "\n".join(lines)
        return cut(body, CALL_CHARS, "listing").text + (
            f"\n[listing cut at {CALL_CHARS:,} characters]" if len(body) > CALL_CHARS else "")
    cells = select(doc, address)
    if address.search is not None:
        lines.append(f"{len(cells)} cell(s) mention {address.search[:100]!r}.")
        if len(cells) > SEARCH_HITS:
            lines.append(f"[showing the first {SEARCH_HITS}]")
            cells = cells[:SEARCH_HITS]
    used = sum(len(line) + 1 for line in lines)
    for i, cell in enumerate(cells):
        text = render_cell(cell, scrub, outputs)
        if used + len(text) + 1 > CALL_CHARS - 200 and i > 0:  # room for the note below
            rest = cells[i:]
            nxt = rest[0].index
            hint = f" (read on with start={nxt})" if nxt is not None else ""
            lines.append(f"[{len(rest)} more cell(s) not shown: this call's budget of "
                         f"{CALL_CHARS:,} characters is used{hint}]")
            break
        lines.append(text)
        used += len(text) + 1
        if shown is not None:
            shown.append(cell)
    return "\n".join(lines)
