"""notebook_read's addressing and its per-cell and per-call budgets, on real saved notebooks
(10,000 cells, a cell larger than its budget) and on a notebook with no file at all."""

from __future__ import annotations

import json
import time

import nbformat
import pytest

from forge_jupyter.errors import ToolError
from forge_jupyter.notebook.cells import budget
from forge_jupyter.notebook.cells.document import as_written, read_document
from forge_jupyter.notebook.cells.render import Address, render
from forge_jupyter.scrub import Scrubber

scrub = Scrubber()


def saved(tmp_path, cells):
    nb = nbformat.v4.new_notebook()
    nb.cells = cells
    path = tmp_path / "big.ipynb"
    nbformat.write(nb, path)
    return str(path)


@pytest.fixture(scope="module")
def ten_thousand(tmp_path_factory):
    cells = [{"cell_type": "code", "id": f"c{i}", "source": f"x{i} = {i}  # line {i}",
              "metadata": {}, "outputs": [], "execution_count": None} for i in range(10_000)]
    cells[7_777]["source"] = "needle = 'find me'"
    path = tmp_path_factory.mktemp("big") / "big.ipynb"
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4,
                                "nbformat_minor": 5}))
    return read_document(str(path), {}, None)


def test_a_listing_of_10000_cells_stops_at_its_budget_and_says_how_to_read_on(ten_thousand):
    start = time.perf_counter()
    text = render(ten_thousand, Address(), scrub)
    assert time.perf_counter() - start < 5
    assert text.startswith("Notebook big.ipynb: 10000 cells. Read from the saved notebook file")
    assert len(text) <= budget.CALL_CHARS + 200
    assert f"[listing cut at {budget.LIST_CELLS} of 10,000 cells: read more with start=" in text


def test_a_range_stops_at_the_calls_budget_and_names_where_to_go_on(ten_thousand):
    text = render(ten_thousand, Address(start=0, end=9_999), scrub)
    assert len(text) <= budget.CALL_CHARS
    assert "more cell(s) not shown: this call's budget of 20,000 characters is used" in text
    assert "(read on with start=" in text


def test_a_search_over_10000_cells_finds_the_one(ten_thousand):
    text = render(ten_thousand, Address(search="FIND ME"), scrub)
    assert "1 cell(s) mention 'FIND ME'" in text and "#7777" in text


def test_cells_are_addressed_by_position_id_and_count_with_errors_that_say_what_exists(tmp_path):
    cell = nbformat.v4.new_code_cell("print(1)", execution_count=3)
    doc = read_document(saved(tmp_path, [nbformat.v4.new_markdown_cell("# Title"), cell]), {}, None)
    assert "print(1)" in render(doc, Address(index=1), scrub)
    assert "print(1)" in render(doc, Address(id=cell.id), scrub)
    assert "In [3]" in render(doc, Address(execution_count=3), scrub)
    with pytest.raises(ToolError, match=r"no cell #5: the notebook has 2 cells \(#0 to #1\)"):
        render(doc, Address(index=5), scrub)
    with pytest.raises(ToolError, match="No cell has id 'nope'. Call notebook_read with no"):
        render(doc, Address(id="nope"), scrub)
    with pytest.raises(ToolError, match=r"No cell ran as In \[9\]. Counts known: 3"):
        render(doc, Address(execution_count=9), scrub)
    with pytest.raises(ToolError, match="start ≤ end"):
        render(doc, Address(start=1, end=0), scrub)


def test_one_huge_cell_is_cut_to_the_cells_budget_source_and_outputs(tmp_path):
    cell = nbformat.v4.new_code_cell("y = 1\n" * 5_000)
    cell.outputs = [nbformat.v4.new_output("stream", text="z" * 3_000) for _ in range(20)]
    text = render(read_document(saved(tmp_path, [cell]), {}, None), Address(index=0), scrub)
    assert "[source cut at" in text and "more output(s) not shown: the cell's budget of 6,000" in text
    assert len(text) < budget.CELL_CHARS + 1_000


def test_an_unsaved_notebook_is_read_from_the_kernels_history_and_says_so():
    ns = {"In": ["", "a = 1", "get_ipython().run_line_magic('load_ext', 'forge_jupyter')",
                 "await get_ipython()._forge_magics.run_cell('-m x', 'hello\\n')"],
          "Out": {1: 42}}
    doc = read_document(None, ns, None)
    text = render(doc, Address(), scrub)
    assert "Read from this kernel's history only" in text and "has no path" in text
    assert "%load_ext forge_jupyter" in text and "%%forge -m x" in text
    assert "42" in render(doc, Address(execution_count=1), scrub)


def test_a_notebook_not_saved_yet_or_not_json_falls_back_to_the_history(tmp_path):
    missing = read_document(str(tmp_path / "Untitled.ipynb"), {"In": ["", "b = 2"]}, None)
    assert missing.origin == "kernel" and "has not been saved yet" in missing.notes[0]
    broken = tmp_path / "broken.ipynb"
    broken.write_text("{not json")
    doc = read_document(str(broken), {"In": ["", "b = 2"]}, None)
    assert doc.origin == "kernel" and "could not be read (JSONDecodeError)" in doc.notes[0]
    odd = tmp_path / "odd.ipynb"
    odd.write_text(json.dumps({"cells": [1, None, {"source": ["a", "b"], "outputs": "x"}]}))
    [cell] = read_document(str(odd), {}, None).cells
    assert cell.source == "ab" and cell.outputs == []


def test_a_secret_in_a_cells_source_is_scrubbed(tmp_path):
    key = "sk-proj-" + "Zq7" * 12
    doc = read_document(saved(tmp_path, [nbformat.v4.new_code_cell(f"KEY = '{key}'")]), {}, None)
    assert key not in render(doc, Address(index=0), scrub)
    assert key not in render(doc, Address(), scrub)


def test_a_forge_cell_in_the_history_reads_as_written():
    assert as_written("await get_ipython()._forge_magics.run_cell('', 'Why?\\n')") == "%%forge\nWhy?\n"
    assert as_written("x = 1") == "x = 1"
