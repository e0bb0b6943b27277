"""The bundled notebooks take papermill's parameters (issue 29, item 4): each has a cell tagged
``parameters``, so ``-p`` changes what runs — the quickstart's follow-up question, the store the
analysis notebook reads. Real papermill, a real kernel, the offline demo model."""

from __future__ import annotations

from pathlib import Path

import duckdb
import nbformat
import pytest

from tests.notebook.test_quickstart import PROVIDER_KEYS

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
QUESTION = "Which month had the highest revenue?"


def test_papermill_parameters_reach_the_quickstart_and_the_analysis(tmp_path, monkeypatch):
    papermill = pytest.importorskip("papermill")
    for key in PROVIDER_KEYS + ("FORGE_MODEL", "FORGE_API_BASE", "FORGE_API_KEY", "FORGE_DB"):
        monkeypatch.delenv(key, raising=False)
    store = tmp_path / "team.duckdb"
    monkeypatch.setenv("FORGE_DB", str(tmp_path / "unused.duckdb"))  # -p db must win below
    monkeypatch.setenv("HOME", str(tmp_path))  # forge's default file, if anything fell back to it

    out = tmp_path / "quickstart-out.ipynb"
    monkeypatch.setenv("FORGE_DB", str(store))
    papermill.execute_notebook(str(ROOT / "notebooks" / "quickstart.ipynb"), str(out),
                               parameters={"question": QUESTION}, kernel_name="python3",
                               cwd=str(tmp_path), progress_bar=False)
    nb = nbformat.read(out, as_version=4)
    injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert len(injected) == 1 and QUESTION in injected[0].source
    with duckdb.connect(str(store), read_only=True) as con:
        asked = [r[0] for r in con.execute(
            "SELECT json_extract_string(p.data, '$.text') FROM part p JOIN message m "
            "ON m.id = p.message_id WHERE m.role = 'user' AND p.type = 'text' "
            "AND NOT coalesce(TRY_CAST(p.data ->> '$.synthetic' AS BOOLEAN), false)").fetchall()]
    assert QUESTION in asked, asked  # the follow-up asked what -p said, not the default

    monkeypatch.setenv("FORGE_DB", str(tmp_path / "unused.duckdb"))
    analysis = tmp_path / "analysis-out.ipynb"
    papermill.execute_notebook(str(ROOT / "notebooks" / "analysis.ipynb"), str(analysis),
                               parameters={"db": str(store)}, kernel_name="python3",
                               cwd=str(tmp_path), progress_bar=False)
    cells = nbformat.read(analysis, as_version=4).cells
    sessions = next(c for c in cells if "forge.sessions()" in c.source)
    table = sessions.outputs[0]["data"]["text/plain"].splitlines()
    with duckdb.connect(str(store), read_only=True) as con:
        steps = con.execute("SELECT count(*) FROM part WHERE type = 'step-finish'").fetchone()[0]
        count = con.execute("SELECT count(*) FROM session").fetchone()[0]
    assert len(table) == 1 + count and count >= 2, table  # the quickstart's session and its fork
    assert sum(int(line.split()[-4]) for line in table[1:]) == steps, table  # its steps, read
    assert not (tmp_path / "unused.duckdb").exists()  # it read the store -p named
