"""Which saved notebook a headless run executes, found by its cells (cells/finder.py): real
files in a real folder, several of them hostile."""

from __future__ import annotations

import json
import os

import nbformat

from forge_jupyter.notebook.cells.finder import NotebookFinder

LOAD = "%load_ext forge_jupyter"
CELL = "%%forge\nSummarize df."


def _write(path, *sources, ids=None, metadata=None):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    for cell, cell_id in zip(nb.cells, ids or [], strict=False):
        cell.id = cell_id
    nb.metadata.update(metadata or {})
    nbformat.write(nb, str(path))
    return nb


def test_the_notebook_holding_the_running_cell_is_found_with_its_cell_id(tmp_path):
    nb = _write(tmp_path / "analysis.ipynb", LOAD, "x = 1", CELL)
    _write(tmp_path / "other.ipynb", LOAD, "%%forge\nSomething else.")
    found = NotebookFinder().find(str(tmp_path), CELL + "\n", [LOAD, "x = 1"])
    assert found.path == str(tmp_path / "analysis.ipynb")
    assert found.cell_id == nb.cells[2].id


def test_the_cells_run_before_decide_between_two_notebooks_sharing_the_cell(tmp_path):
    _write(tmp_path / "a.ipynb", LOAD, "df = load('a')", CELL)
    b = _write(tmp_path / "b.ipynb", LOAD, "df = load('b')", CELL)
    found = NotebookFinder().find(str(tmp_path), CELL, [LOAD, "df = load('b')"])
    assert (found.path, found.cell_id) == (str(tmp_path / "b.ipynb"), b.cells[2].id)


def test_two_different_notebooks_that_cannot_be_told_apart_are_not_guessed(tmp_path):
    _write(tmp_path / "a.ipynb", LOAD, CELL)
    _write(tmp_path / "b.ipynb", LOAD, CELL)  # other cell ids: another notebook
    found = NotebookFinder().find(str(tmp_path), CELL, [LOAD])
    assert found.path is None and found.cell_id is None
    assert "a.ipynb, b.ipynb" in found.why and "JPY_SESSION_NAME" in found.why


def test_a_copy_with_the_same_ids_beside_it_is_the_same_notebook_by_its_shorter_name(tmp_path):
    nb = _write(tmp_path / "analysis.ipynb", LOAD, CELL)
    nbformat.write(nb, str(tmp_path / "analysis.nbconvert.ipynb"))  # nbconvert's output
    found = NotebookFinder().find(str(tmp_path), CELL, [LOAD])
    assert (found.path, found.cell_id) == (str(tmp_path / "analysis.ipynb"), nb.cells[1].id)


def test_the_same_cell_written_twice_is_told_apart_by_how_often_it_ran(tmp_path):
    again = "%%forge\nContinue."
    nb = _write(tmp_path / "n.ipynb", LOAD, again, "y = 2", again)
    finder = NotebookFinder()
    assert finder.find(str(tmp_path), again, [LOAD]).cell_id == nb.cells[1].id
    assert finder.find(str(tmp_path), again, [LOAD, again, "y = 2"]).cell_id == nb.cells[3].id


def test_a_papermill_output_stands_for_its_input_under_the_folder_only(tmp_path):
    (tmp_path / "nb").mkdir()
    source = _write(tmp_path / "nb" / "report.ipynb", LOAD, CELL)
    meta = {"papermill": {"input_path": "nb/report.ipynb", "output_path": "out-7.ipynb"}}
    nbformat.write(nbformat.from_dict({**source, "metadata": meta}), str(tmp_path / "out-7.ipynb"))
    found = NotebookFinder().find(str(tmp_path), CELL, [LOAD])
    assert found.path == str(tmp_path / "nb" / "report.ipynb")  # not the output's own name

    outside = tmp_path.parent / f"{tmp_path.name}-private.ipynb"
    _write(outside, "secret = 1")
    for spelling in (str(outside), f"../{outside.name}", f"nb/../../{outside.name}"):
        planted = {"papermill": {"input_path": spelling}}
        (tmp_path / "out-7.ipynb").write_text(json.dumps({**source, "metadata": planted}))
        found = NotebookFinder().find(str(tmp_path), CELL, [LOAD])
        assert found.path != str(outside), spelling
    outside.unlink()


def test_hostile_files_are_passed_over_and_nothing_blocks(tmp_path):
    os.mkfifo(tmp_path / "a-fifo.ipynb")  # opening it would wait for a writer forever
    (tmp_path / "b-broken.ipynb").write_text("{not json")
    (tmp_path / "c-deep.ipynb").write_text("[" * 200_000 + "]" * 200_000)
    (tmp_path / "d-list.ipynb").write_text(json.dumps([CELL]))
    (tmp_path / "e-cells.ipynb").write_text(json.dumps({"cells": [CELL, 7, {"source": 7}]}))
    (tmp_path / "f-dir.ipynb").mkdir()
    os.symlink("/dev/zero", tmp_path / "g-zero.ipynb")
    nb = _write(tmp_path / "z-real.ipynb", LOAD, CELL)
    found = NotebookFinder().find(str(tmp_path), CELL, [LOAD])
    assert (found.path, found.cell_id) == (str(tmp_path / "z-real.ipynb"), nb.cells[1].id)


def test_no_notebook_there_says_so_and_an_edited_file_is_read_again(tmp_path):
    finder = NotebookFinder()
    assert finder.find(str(tmp_path / "missing"), CELL, []).path is None
    path = tmp_path / "n.ipynb"
    _write(path, LOAD, "%%forge\nOld prompt.")
    found = finder.find(str(tmp_path), CELL, [LOAD])
    assert found.path is None and "holds this cell" in found.why
    nb = _write(path, LOAD, CELL, "extra = 1")  # saved again: another size and mtime
    assert finder.find(str(tmp_path), CELL, [LOAD]).cell_id == nb.cells[1].id


def test_a_saved_path_that_is_no_regular_file_is_refused_without_blocking(tmp_path):
    from forge_jupyter.notebook.cells.document import load_saved

    os.mkfifo(tmp_path / "pipe.ipynb")
    (tmp_path / "to-pipe.ipynb").symlink_to(tmp_path / "pipe.ipynb")
    (tmp_path / "zeros.ipynb").symlink_to("/dev/zero")  # a device that never ends
    (tmp_path / "dir.ipynb").mkdir()
    for name in ("pipe.ipynb", "to-pipe.ipynb", "zeros.ipynb"):
        assert load_saved(str(tmp_path / name)) == "the notebook's path is not a regular file"
    assert "could not be read" in load_saved(str(tmp_path / "dir.ipynb"))
