"""Replay under nbclient and papermill with nothing set (issue 29, item 3): no JPY_SESSION_NAME,
no cell ids from the runner — the kernel finds its notebook in its folder by the cells it runs
(cells/finder.py), so the second run asks the model nothing. Real kernels, real papermill, the
fake model server counting requests."""

from __future__ import annotations

import duckdb
import nbformat
import pytest

from forge_jupyter.testing import Turn
from tests.notebook.replay_nb import notebook, run, shown

pytestmark = pytest.mark.slow


def _origins(db):
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute("SELECT origin ->> 'notebook', origin ->> 'cell_id' FROM message "
                           "WHERE role = 'user' AND replay_of IS NULL ORDER BY created_at").fetchall()


def test_nbclient_without_a_session_name_replays_the_saved_notebook(tmp_path, fake_model_server):
    server = fake_model_server
    nb = notebook("%%forge\nSay hi.", "%%forge\nSay bye.")
    nbformat.write(nb, str(tmp_path / "analysis.ipynb"))
    server.add(Turn.text("Hi."), Turn.text("Bye."))
    run(nb, tmp_path, server.openai_base, env={"JPY_SESSION_NAME": None})
    assert len(server.requests) == 2
    assert _origins(tmp_path / "forge.duckdb") == [
        (str(tmp_path / "analysis.ipynb"), nb.cells[1].id),
        (str(tmp_path / "analysis.ipynb"), nb.cells[2].id)]  # the file's own cell ids

    # nbconvert's executed copy now lies beside it, the same cells and ids: still one notebook
    nbformat.write(nb, str(tmp_path / "analysis.nbconvert.ipynb"))
    second = run(nb, tmp_path, server.openai_base, env={"JPY_SESSION_NAME": None})
    assert len(server.requests) == 2  # not one more
    assert "Replayed" in shown(second.cells[1]) and "Bye." in shown(second.cells[2])


def test_papermill_reruns_replay_whatever_the_output_is_called(tmp_path, fake_model_server, monkeypatch):
    papermill = pytest.importorskip("papermill")
    server = fake_model_server
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    for key, value in {"FORGE_MODEL": "openai/gpt-4o-mini", "FORGE_DB": str(tmp_path / "forge.duckdb"),
                       "FORGE_WIDGET": "off", "FORGE_API_KEY": "sk-fake",
                       "FORGE_API_BASE": server.openai_base}.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "reports").mkdir()
    source = tmp_path / "reports" / "weekly.ipynb"
    nbformat.write(notebook("%%forge\nSay hi.", "%%forge\nSay bye."), source)
    server.add(Turn.text("Hi."), Turn.text("Bye."))
    for n in (1, 2):  # as `papermill reports/weekly.ipynb out-N.ipynb`, run from tmp_path
        papermill.execute_notebook("reports/weekly.ipynb", str(tmp_path / f"out-{n}.ipynb"),
                                   kernel_name="python3", cwd=str(tmp_path), progress_bar=False)
    assert len(server.requests) == 2  # the second run asked the model nothing
    again = nbformat.read(tmp_path / "out-2.ipynb", as_version=4)
    assert "Replayed" in shown(again.cells[1]) and "Bye." in shown(again.cells[2])
    assert {path for path, _ in _origins(tmp_path / "forge.duckdb")} == {str(source)}


def test_two_notebooks_alike_are_not_guessed_between_and_strict_names_them(tmp_path, fake_model_server):
    a = notebook("%%forge --replay\nSay hi.")
    nbformat.write(a, str(tmp_path / "a.ipynb"))
    nbformat.write(notebook("%%forge --replay\nSay hi."), str(tmp_path / "b.ipynb"))  # other ids
    out = run(a, tmp_path, fake_model_server.openai_base, env={"JPY_SESSION_NAME": None},
              allow_errors=True)
    said = shown(out.cells[1])
    assert "several notebooks in" in said and "(a.ipynb, b.ipynb)" in said, said
    assert len(fake_model_server.requests) == 0
