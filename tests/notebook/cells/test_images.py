"""The images a notebook_read call hands on (notebook/cells/images.py), from outputs that are
untrusted: the best raster form of each, at most CALL_IMAGES a call, and a line for whatever
cannot be read — never an exception, never a guess."""

from __future__ import annotations

import asyncio
import base64
import io

from PIL import Image

from forge_jupyter.notebook.cells.budget import CALL_IMAGES
from forge_jupyter.notebook.cells.document import Cell, NotebookDoc
from forge_jupyter.notebook.cells.images import cell_images, images_line, shown_images


def _png() -> str:
    buf = io.BytesIO()
    Image.new("RGB", (8, 4)).save(buf, "PNG")
    return base64.b64encode(buf.getvalue()).decode()


def _cell(index: int, *datas: dict) -> Cell:
    return Cell(index, f"c{index}", "code", "plot()", 1, [
        {"output_type": "display_data", "metadata": {}, "data": d} for d in datas])


def _read(cells: list[Cell], origin: str = "saved") -> tuple[list, list[str], str | None]:
    found, total = cell_images(cells)
    shown, notes = asyncio.run(shown_images(NotebookDoc(origin, None, cells), found, None))
    return shown, notes, images_line(shown, total)


def test_the_best_raster_form_of_each_output_goes_in_order():
    png = _png()
    shown, notes, line = _read([_cell(0, {"image/svg+xml": "<svg/>", "image/png": png}),
                                _cell(3, {"image/jpeg": png})])
    assert [(s.mime, s.label) for s in shown] == [("image/png", "image/png from cell #0"),
                                                  ("image/jpeg", "image/jpeg from cell #3")]
    assert notes == [] and "2 image(s) of these outputs go with this result" in line


def test_an_svg_only_output_is_not_an_image_to_send():
    shown, notes, line = _read([_cell(0, {"image/svg+xml": "<svg><script>x()</script></svg>"})])
    assert shown == [] and notes == [] and line is None


def test_more_images_than_a_call_sends_are_counted_and_said():
    png = _png()
    shown, _notes, line = _read([_cell(i, {"image/png": png}) for i in range(CALL_IMAGES + 3)])
    assert len(shown) == CALL_IMAGES
    assert "[3 more image(s) not sent: one read sends at most 8" in line


def test_values_that_are_not_base64_are_named_not_raised():
    hostile = [{"image/png": "not base64 at all!!"}, {"image/png": ["iVBOR", 7]},
               {"image/png": {"a": 1}}, {"image/png": None}]
    shown, notes, _line = _read([_cell(i, d) for i, d in enumerate(hostile)])
    assert shown == []
    assert len(notes) == len(hostile) and all("could not be read" in n for n in notes)


def test_a_live_image_cut_by_the_page_is_asked_for_again_or_named():
    cut = "A" * 100_000  # decodes, but it is the page's cut: not an image to send as it is
    cells = [_cell(0, {"image/png": cut})]
    shown, notes, _ = _read(cells, origin="live")  # no page to ask again
    assert shown == [] and "could not be read" in notes[0]

    whole = _png()
    asked: list[list[str]] = []

    async def page(ids):
        asked.append(list(ids))
        return [{"id": "c0", "outputs": [{"output_type": "display_data",
                                          "data": {"image/png": whole}}]}]

    found, _ = cell_images(cells)
    shown, notes = asyncio.run(shown_images(NotebookDoc("live", None, cells), found, page))
    assert asked == [["c0"]] and notes == [] and base64.b64encode(shown[0].data).decode() == whole
