"""The images of the cells a ``notebook_read`` call shows, handed on with its result so a
vision model sees the charts it reads about (the run fits, caps and keeps them like a
``python`` call's: session/images.py); a model without vision reads their text line only.

Output dicts are untrusted: the bytes are base64 decoded here and nothing else; decoding the
image itself, and refusing a bomb, is llm/images.py's."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ...llm.images import SOURCE_MAX_BYTES
from ...tools.base import ShownImage
from .budget import CALL_IMAGES, LIVE_OUTPUT_CHARS
from .document import Cell, NotebookDoc
from .outputs import ImageRef, image_bytes, images, joined

# the types llm/images.py decodes, best first; SVG stays the text the output summary shows
RASTER = ("image/png", "image/jpeg", "image/webp", "image/gif")

# the page's cells with their images whole (cells/live.py), None or a str when it cannot say
ImageCells = Callable[[Sequence[str]], Awaitable[list[Any] | str | None]]


@dataclass(frozen=True)
class CellImage:
    """One output's image: the best raster form it holds."""

    cell: Cell
    at: int  # the output's position in the cell
    mime: str
    ref: ImageRef

    @property
    def label(self) -> str:
        dims = f" {self.ref.width}×{self.ref.height}" if self.ref.width and self.ref.height else ""
        return f"{self.mime}{dims} from cell #{self.cell.index}" if self.cell.index is not None \
            else f"{self.mime}{dims} from In [{self.cell.execution_count}]"


def cell_images(cells: list[Cell]) -> tuple[list[CellImage], int]:
    """The first ``CALL_IMAGES`` images of ``cells``' outputs, in order, and how many in all."""
    found: list[CellImage] = []
    total = 0
    for cell in cells:
        for at, output in enumerate(cell.outputs):
            if not isinstance(output, dict):
                continue
            refs = {r.mime: r for r in images(output)}
            mime = next((m for m in RASTER if m in refs), None)
            if mime is None:
                continue
            total += 1
            if len(found) < CALL_IMAGES:
                found.append(CellImage(cell, at, mime, refs[mime]))
    return found, total


def _cut_by_page(output: dict[str, Any], mime: str) -> bool:
    data = output.get("data")
    return isinstance(data, dict) and len(joined(data.get(mime, ""))) >= LIVE_OUTPUT_CHARS


async def shown_images(doc: NotebookDoc, found: list[CellImage], whole: ImageCells | None
                       ) -> tuple[list[ShownImage], list[str]]:
    """The bytes of ``found``, fetched whole from the page where its answer cut them; and a
    line for each image that could not be read."""
    # an image the page cut (at LIVE_OUTPUT_CHARS, like any value) may still decode: its
    # length says it was cut, and it is asked for again, whole
    again = [i for i in found if doc.origin == "live" and i.cell.id
             and _cut_by_page(i.cell.outputs[i.at], i.mime)]
    datas: list[bytes | None] = [
        None if i in again else image_bytes(i.cell.outputs[i.at], i.mime, SOURCE_MAX_BYTES)
        for i in found]
    if again and whole is not None:
        cells = await whole(sorted({str(i.cell.id) for i in again}))
        by_id = {c.get("id"): c for c in cells if isinstance(c, dict)} \
            if isinstance(cells, list) else {}
        for n, image in enumerate(found):
            if image in again:
                outputs = by_id.get(image.cell.id, {}).get("outputs")
                if isinstance(outputs, list) and image.at < len(outputs) \
                        and isinstance(outputs[image.at], dict):
                    datas[n] = image_bytes(outputs[image.at], image.mime, SOURCE_MAX_BYTES)
    shown, notes = [], []
    for image, data in zip(found, datas, strict=True):
        if data is None:
            notes.append(f"[the {image.label} could not be read: not valid base64, or larger "
                         f"than {SOURCE_MAX_BYTES // 1_000_000} MB]")
        else:
            shown.append(ShownImage(data, image.mime, image.label))
    return shown, notes


def images_line(shown: list[ShownImage], total: int) -> str | None:
    """What the result says of the images it hands on."""
    if not total:
        return None
    line = (f"[{len(shown)} image(s) of these outputs go with this result, in order, to a model "
            "that takes images: " + "; ".join(s.label for s in shown) + "]") if shown else ""
    if total > CALL_IMAGES:
        line += (f"\n[{total - CALL_IMAGES} more image(s) not sent: one read sends at most "
                 f"{CALL_IMAGES}; read fewer cells to see the others]")
    return line.strip() or None
