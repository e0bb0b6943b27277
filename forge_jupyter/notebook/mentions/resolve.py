"""The mentions of a prompt turned into what the model reads with it (docs/notebook-context.md,
"Pointing at things"), each by the machinery that already reads that thing for the agent:

- ``@name``: what the ``variables`` tool says of the variable (tools/variables.py);
- ``@In[N]``, ``@cell:<id>``: the cell's source and outputs as ``notebook_read`` prints them
  (cells/render.py), from the live page when it is there, else the saved file and the kernel;
- ``@error``: the last failed execution's error with its last frames (cells/run_log.py), and
  its cell;
- ``@file:path``: the file as the ``read`` tool shows it, by its rules — inside the session's
  root, no link out of it, never the store's files nor another session's outputs — and limits.

An attachment is bounded (``MENTION_CHARS``, and ``MENTIONS_CHARS`` for the whole prompt),
saying so where it was cut, and scrubbed of secrets before it leaves here (the write entry
scrubs it again with the run's own keys). A mention of nothing there is a ``MentionError``
naming what does exist: nothing is sent.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from ...errors import ToolError
from ..cells.budget import MENTION_CHARS, MENTIONS_CHARS, cut
from ..cells.document import Cell, NotebookDoc
from ..cells.outputs import Scrub, clean
from ..cells.render import header, render_cell
from ..cells.run_log import RunLog
from .grammar import ESCAPE_HINT, Mention, MentionError

NAMES_LISTED = 40  # variables or cells an unknown mention's error names
MIN_ROOM = 200  # below this, an attachment is left out rather than cut to nothing


class Document(Protocol):
    """The current notebook, read afresh (``cells.reader.CellReader``)."""

    async def document(self) -> NotebookDoc: ...


@dataclass(frozen=True)
class Sources:
    """Where mentions are read: the namespace, the notebook, what ran, and the files."""

    namespace: dict[str, Any]
    notebook: Document | None
    log: RunLog | None
    read_file: Callable[[str], str] | None  # the read tool's first page of a file
    scrub: Scrub


@dataclass(frozen=True)
class Attachment:
    """One mention as the model reads it: a synthetic text part of the prompt."""

    mention: str  # as written: @df, @In[3]
    text: str


class _ReadOnce:
    """The notebook read at its first use and kept for the rest of one prompt's mentions
    (from the live page that is a round trip to the browser each time)."""

    def __init__(self, notebook: Document) -> None:
        self._notebook = notebook
        self._doc: NotebookDoc | None = None

    async def document(self) -> NotebookDoc:
        if self._doc is None:
            self._doc = await self._notebook.document()
        return self._doc


def _unknown_name(name: str, namespace: dict[str, Any]) -> MentionError:
    from ...tools.variables import visible_names

    names = visible_names(namespace)
    listed = ", ".join(f"@{n}" for n in names[:NAMES_LISTED]) or "none yet"
    more = f" and {len(names) - NAMES_LISTED} more" if len(names) > NAMES_LISTED else ""
    return MentionError(f"@{name} points at nothing: the notebook has no variable {name!r}. "
                        f"Variables: {listed}{more}. {ESCAPE_HINT}")


def _variable(name: str, sources: Sources) -> tuple[str, str]:
    from ...tools.variables import inspect_variable

    namespace = sources.namespace
    if name not in namespace:
        raise _unknown_name(name, namespace)
    try:
        body = inspect_variable(name, namespace[name])
    except Exception as exc:  # the value's own repr or describe() failed: say so, send the rest
        body = f"{name}: {type(namespace[name]).__name__} (its description failed: " \
               f"{type(exc).__name__})"
    return f"the variable {name}, as the variables tool inspects it", body


def _cells_listed(doc: NotebookDoc) -> str:
    cells = [c for c in doc.cells if c.index is not None]
    named = [f"#{c.index} {c.id}" + (f" In [{c.execution_count}]" if c.execution_count else "")
             for c in cells[:NAMES_LISTED] if c.id]
    more = f" and {len(cells) - NAMES_LISTED} more" if len(cells) > NAMES_LISTED else ""
    return ", ".join(named) + more if named else "none with an id"


def _cells(doc: NotebookDoc, found: list[Cell], scrub: Scrub) -> str:
    return "\n".join([header(doc), *(render_cell(c, scrub) for c in found)])


async def _document(sources: Sources, mention: Mention) -> NotebookDoc:
    if sources.notebook is None:
        raise MentionError(f"{mention.written} points at a cell, and there is no notebook here: "
                           "cells can be mentioned in a Jupyter kernel with %load_ext "
                           f"forge_jupyter. {ESCAPE_HINT}")
    return await sources.notebook.document()


async def _in(count: int, sources: Sources, mention: Mention) -> tuple[str, str]:
    doc = await _document(sources, mention)
    found = [c for c in doc.cells if c.execution_count == count]
    if not found:
        counts = sorted({c.execution_count for c in doc.cells if c.execution_count is not None})
        known = ", ".join(f"In [{n}]" for n in counts[-NAMES_LISTED:]) or "none yet"
        raise MentionError(f"@In[{count}] points at nothing: no cell ran as In [{count}]. "
                           f"Cells that ran: {known}. {ESCAPE_HINT}")
    return f"the cell that ran as In [{count}], from {doc.source}", _cells(doc, found[:1],
                                                                         sources.scrub)


async def _cell(cell_id: str, sources: Sources, mention: Mention) -> tuple[str, str]:
    doc = await _document(sources, mention)
    found = [c for c in doc.cells if c.id == cell_id]
    if not found:
        raise MentionError(f"@cell:{cell_id} points at nothing: {doc.name} has no cell with that "
                           f"id. Its cells: {_cells_listed(doc)}. {ESCAPE_HINT}")
    return f"the cell with id {cell_id}, from {doc.source}", _cells(doc, found[:1], sources.scrub)


async def _error(sources: Sources) -> tuple[str, str]:
    log = sources.log
    failed = log.last_failure() if log is not None else None
    error = failed.error if failed is not None else log.last_error() if log is not None else None
    if error is None:
        raise MentionError("@error points at nothing: no cell has failed in this kernel since "
                           f"forge was loaded. {ESCAPE_HINT}")
    count = failed.execution_count if failed is not None else None
    lines = [f"{'In [' + str(count) + ']' if count else 'A cell'} failed: {error.line()}",
             "Traceback (last frames):", *(f"  {f}" for f in error.frames)]
    if count is not None and sources.notebook is not None:
        doc = await sources.notebook.document()
        found = [c for c in doc.cells if c.execution_count == count]
        if found:
            lines.append(_cells(doc, found[:1], sources.scrub))
    return "the last error", "\n".join(lines)


def _file(path: str, sources: Sources) -> tuple[str, str]:
    if sources.read_file is None:
        raise MentionError(f"@file:{path} cannot be read: this session has no root folder for "
                           "files.")
    try:
        body = sources.read_file(path)
    except ToolError as exc:  # the read tool's own refusal: outside the root, a link, the store
        raise MentionError(f"@file:{path} is not attached: {exc}") from None
    return f"the file {path}, as the read tool shows it (numbered lines)", body


async def _one(mention: Mention, sources: Sources) -> tuple[str, str]:
    if mention.kind == "name":
        return _variable(mention.value, sources)
    if mention.kind == "in":
        return await _in(int(mention.value), sources, mention)
    if mention.kind == "cell":
        return await _cell(mention.value, sources, mention)
    if mention.kind == "error":
        return await _error(sources)
    return _file(mention.value, sources)


async def resolve(mentions: Sequence[Mention], sources: Sources) -> list[Attachment]:
    """Each mention's attachment, in order, within the budgets; ``MentionError`` for the
    first mention that points at nothing (then nothing is attached, and nothing sent)."""
    if sources.notebook is not None:  # read once for all the prompt's cell mentions
        sources = replace(sources, notebook=_ReadOnce(sources.notebook))
    read = [(m, *await _one(m, sources)) for m in mentions]
    out: list[Attachment] = []
    room = MENTIONS_CHARS
    for mention, what, body in read:
        head = f"[{mention.written}, attached by forge: {what}]"
        limit = min(MENTION_CHARS, room - len(head))
        if limit < MIN_ROOM:
            out.append(Attachment(mention.written, f"{head}\n[not attached: this prompt's "
                                  f"attachments used their {MENTIONS_CHARS:,} characters; ask "
                                  "for it on its own]"))
            continue
        shown = cut(clean(body, sources.scrub), limit, mention.written)
        text = "\n".join([head, shown.text, *([shown.note] if shown.note else [])])
        out.append(Attachment(mention.written, text))
        room -= len(text)
    return out


def file_reader(store: Any, root: str | None, session_id: str) -> Callable[[str], str]:
    """The read tool, as a mention of a file uses it: its first page of ``path`` under
    ``root`` (its refusals are ToolErrors), for the session ``session_id``."""
    from ...tools.base import ToolContext
    from ...tools.read import read

    ctx = ToolContext(session_id=session_id, message_id="", call_id="", part_id="", store=store,
                      root=root)
    return lambda path: read(path, ctx=ctx).output
