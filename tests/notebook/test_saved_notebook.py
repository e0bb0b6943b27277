"""Saved notebooks stay small (issue 13, item 4): a headless-executed %%forge cell leaves its
turn's record and the widget's small bootstrap in the file, never the widget's renderer."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import nbformat
import pytest

from forge_jupyter.notebook.widget_code import STATIC, boot_esm
from tests.notebook.saved_notebook import (
    LOAD,
    execute,
    forge_cells,
    saved_bytes,
    script,
    turn_widget_states,
)

pytestmark = pytest.mark.slow


def strings(node: Any) -> Iterator[str]:
    """Every string in a JSON document, keys included."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for key, value in node.items():
            yield key
            yield from strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from strings(value)


def test_a_saved_notebook_holds_each_turn_but_not_the_widget_script(tmp_path, model_server):
    renderer = STATIC / "widget.js"
    if not renderer.exists():
        pytest.fail("forge_jupyter/static/widget.js is missing: pip install -e . builds it")
    model_server.clear()
    script(model_server, 2)
    nb = execute([LOAD, *forge_cells(2)], model_server, tmp_path)

    states = turn_widget_states(nb)
    assert len(states) == 2, "each %%forge cell's widget is in the saved widget state"
    for state in states:
        assert state["_esm"] == boot_esm(), "the widget's script is the bootstrap only"
        assert "_css" not in state
    boot = len(boot_esm().encode())
    assert boot < 1500

    saved = "\n".join(strings(nbformat.reads(nbformat.writes(nb), as_version=4)))
    code = renderer.read_text()
    # No stretch of the renderer (nor its CSS) is in any string of the file: 80 characters
    # from its middle, its end, and its CSS's first rule.
    for probe in (code[len(code) // 2:len(code) // 2 + 80], code[-80:],
                  (STATIC / "widget.css").read_text()[:80]):
        assert probe not in saved
    # The turns are there: each answer is the cell's value.
    for i, cell in enumerate(nb.cells[1:]):
        values = [o for o in cell.outputs if o.output_type == "execute_result"]
        assert f"Hello number {i}" in values[0].data["text/html"]
    sizes = saved_bytes(nb)
    # Before, each cell's widget state carried the ~90 KB renderer and ~8 KB of CSS; now the
    # bootstrap, the widget's few traits and ipywidgets' layout model: ~3.5 KB.
    assert sizes["widget_state"] < 2 * 5_000, sizes
    assert sizes["file"] < 2 * 8_000, sizes
