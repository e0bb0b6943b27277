"""The notebook layer's ``NotebookReader`` (tools/notebook_read.py): one per kernel, set on the
Forge's services by the controller, reading the document afresh at each call."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from ...scrub import Scrubber
from ...tools.notebook_read import NotebookReading
from .document import Cell, NotebookDoc, read_document
from .images import cell_images, images_line, shown_images
from .render import Address, render
from .run_log import RunLog

# the page's cells (nbformat dicts; given ids, those cells with their images whole); None: no
# page; a str: why the page did not answer
LiveCells = Callable[..., Awaitable[list[Any] | str | None]]


class CellReader:
    def __init__(self, namespace: dict[str, Any], log: RunLog | None,
                 path: Callable[[], str | None], live: LiveCells | None = None) -> None:
        self.namespace, self.log, self.path, self.live = namespace, log, path, live

    async def document(self) -> NotebookDoc:
        cells = await self.live() if self.live is not None else None
        # a 64 MB file is parsed off the kernel's loop
        doc = await asyncio.to_thread(read_document, self.path(), self.namespace, self.log,
                                      None if isinstance(cells, str) else cells)
        if isinstance(cells, str):
            doc.notes.insert(0, cells)
        return doc

    async def read(self, args: dict[str, Any]) -> NotebookReading:
        doc = await self.document()
        address = Address.of(args)
        outputs = args.get("outputs", True) is not False
        shown: list[Cell] = []
        text = await asyncio.to_thread(render, doc, address, Scrubber.from_environment(),
                                       outputs, shown)
        what = "cells" if address.listing else next(
            f"{k} {v}" for k, v in vars(address).items() if v is not None)
        found, total = cell_images(shown) if outputs else ([], 0)
        images, notes = await shown_images(doc, found, self.live) if found else ([], [])
        lines = [text, *notes, images_line(images, total) or ""]
        return NotebookReading("\n".join(x for x in lines if x), f"{doc.name}: {what}"[:80],
                               images)
