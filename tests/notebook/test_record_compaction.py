"""The record a saved notebook keeps is everything the turn did (issue 26, bug 1): a turn
that compacted automatically mid-way keeps its earlier call, its output and the marker."""

from __future__ import annotations

import re

import pytest

from forge_jupyter.testing import Turn, tool_call
from tests.notebook.saved_notebook import LOAD, execute

pytestmark = pytest.mark.slow

BIG = "print('\\n'.join(f'row {i:05d} ' + 'x' * 40 for i in range(1_100)))"  # ~50k characters


def _record(cell) -> str:
    """The turn's record: the display that replaced the live widget."""
    htmls = [o.data["text/html"] for o in cell.outputs
             if o.output_type == "display_data" and "text/html" in o.get("data", {})
             and "forge-record" in o.data["text/html"]]
    assert len(htmls) == 1, [o.get("data", {}).keys() for o in cell.outputs]
    return htmls[0]


def test_a_mid_turn_compaction_keeps_the_earlier_work_in_the_record(tmp_path, model_server):
    model_server.clear()
    model_server.add(Turn([tool_call("python", {"code": BIG})]),
                     Turn.text("## Goal\nPrint the rows.\n## Open work\nNone."),
                     Turn.text("All 1,100 rows are printed."))
    nb = execute([LOAD, "%%forge\nPrint the rows."], model_server, tmp_path,
                 settings={"FORGE_CHAR_BUDGET": "20000", "FORGE_PERMISSIONS": "python:*=allow"})
    cell = nb.cells[1]
    record = _record(cell)
    assert len(model_server.requests) == 3, "the call, the summary, the answer after it"
    assert "Context compacted" in record and "automatically" in record
    # The call before the compaction: its card, its code, its output (cut to the record's limit).
    assert 'data-state="completed" data-tool="python"' in record
    assert "row 00000" in record and "more characters in the store" in record
    assert "row 01099" not in record
    # The header counts the whole turn: the calling step and the answering one.
    header = re.search(r'<span class="forge-summary-line"[^>]*>(forge[^<]*)</span>', record)
    assert header is not None
    assert "2 steps" in header.group(1) and "1 tool call" in header.group(1), header.group(1)
    values = [o for o in cell.outputs if o.output_type == "execute_result"]
    assert "All 1,100 rows are printed." in values[0].data["text/html"]
