"""The store opens in the DuckDB clients people have (issue 29, item 1): a file forge makes is
read by a real DuckDB 1.x client in its own environment (``.venv-duckdb1``, which ``.ci/run``
makes: the 1.x clients — the CLI on PyPI, DBeaver/JDBC, older Python and Node — refuse the
2.x format), and an existing 2.x-format file is left as it is, with a copy for old clients."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import duckdb
import pytest

from forge_jupyter.store.duckdb.store import DuckDBStore
from forge_jupyter.testing import Turn

ROOT = Path(__file__).resolve().parents[2]
OLD_PYTHON = ROOT / ".venv-duckdb1" / "bin" / "python"
READ = """
import duckdb, json, sys
con = duckdb.connect(sys.argv[1], read_only=True)
out = {"version": duckdb.__version__,
       "roles": [r[0] for r in con.sql("SELECT role FROM message ORDER BY created_at").fetchall()],
       "parts": con.sql("SELECT count(*) FROM part").fetchone()[0],
       "views": {v: con.sql(f"SELECT count(*) FROM {v}").fetchone()[0]
                 for v in ("sessions", "messages", "parts", "turns", "costs", "timeline")}}
print(json.dumps(out))
"""


def _old_client(path: Path) -> dict:
    if not OLD_PYTHON.exists():
        pytest.skip("no DuckDB 1.x client: python3 -m venv .venv-duckdb1 && "
                    ".venv-duckdb1/bin/pip install 'duckdb>=1.1,<2' (.ci/run does)")
    done = subprocess.run([str(OLD_PYTHON), "-c", READ, str(path)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def test_a_store_forge_made_opens_in_a_duckdb_1_client(make_forge, server, tmp_path):
    server.add(Turn.text("Hello from the store."))
    path = tmp_path / "team.duckdb"
    forge = make_forge(db=str(path))  # a new file, made by forge (not the test's template)
    forge.session("s").prompt("Say hello")
    forge.close()
    got = _old_client(path)
    assert got["version"].startswith("1.")
    assert got["roles"] == ["user", "assistant"] and got["parts"] >= 2
    assert got["views"]["sessions"] == 1 and got["views"]["turns"] == 1


def test_an_existing_2x_file_keeps_its_format_and_a_copy_is_1x_readable(tmp_path):
    old = tmp_path / "old.duckdb"
    con = duckdb.connect(":memory:")  # a store made before: DuckDB 2's own format
    con.execute(f"ATTACH '{old}' AS x (TYPE DUCKDB)")
    con.execute("DETACH x")
    DuckDBStore(old, tenant_id="default").close()  # opened (and migrated) as it is, not refused
    copy = tmp_path / "copy.duckdb"
    done = subprocess.run([str(ROOT / ".venv" / "bin" / "forge-jupyter"), "copy", str(old), str(copy)],
                          capture_output=True, text=True, timeout=300)
    if done.returncode != 0 and "No such file" in done.stderr:
        pytest.skip("the forge-jupyter command is not installed in .venv")
    assert done.returncode == 0, done.stdout + done.stderr
    got = _old_client(copy)
    assert got["roles"] == [] and got["views"]["sessions"] == 0
