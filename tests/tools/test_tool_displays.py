"""A tool's rich output (a plot) reaches the person live through the run, as printed text does."""

from __future__ import annotations

import struct

import pytest

from forge_jupyter.bus import DisplayData, ToolOutput
from forge_jupyter.testing import Turn, tool_call

ALLOW_PYTHON = ["python:*=allow"]


class Picture:
    """A value that shows itself as a PNG (IPython's _repr_png_), 7×5 pixels."""

    def _repr_png_(self) -> bytes:
        return b"\x89PNG\r\n\x1a\n" + struct.pack(">I4sII", 13, b"IHDR", 7, 5) + b"\x08\x06\x00\x00\x00"


@pytest.mark.parametrize("displayed", [True, False])
def test_a_plot_is_published_for_its_call_and_the_model_is_told_whether_it_was_seen(
        make_forge, server, displayed):
    server.add(Turn([tool_call("python", {"code": "print('drawing')\npicture"})]),
               Turn.text("drawn"))
    forge = make_forge(builtin_tools=True, permissions=ALLOW_PYTHON,
                       namespace={"picture": Picture()})
    forge.display_available = displayed  # what the notebook controller sets in a kernel
    seen: list = []
    forge.bus.subscribe(seen.append, types=(DisplayData, ToolOutput))
    session = forge.session("s")
    session.prompt("draw it")
    call = session.messages()[1].tool_parts[0]
    shown = [e for e in seen if isinstance(e, DisplayData)]
    assert [(e.session_id, e.part_id, e.data["text/plain"]) for e in shown] == [
        (session.id, call.id, "image/png 7×5")]
    assert shown[0].data["image/png"]  # the picture itself, base64
    printed = [e for e in seen if isinstance(e, ToolOutput)]
    assert {e.part_id for e in printed} == {call.id} and "drawing" in "".join(e.text for e in printed)
    told = "[image/png 7×5, shown to the user]" if displayed else "[image/png 7×5 (no display here to show it)]"
    assert call.output.splitlines() == ["drawing", told]
    assert call.metadata["displays"] == [told[1:-1]]
