"""docs/schema.md is generated from a live database; regenerating it must change nothing."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

from forge_jupyter.store.sql.tables import TENANT_TABLES
from forge_jupyter.store.sql.views import VIEW_NAMES

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "gen_schema_docs.py"
DOCS = ROOT / "docs" / "schema.md"


def load_generator():
    spec = importlib.util.spec_from_file_location("gen_schema_docs", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_schema_docs_match_a_fresh_generation(tmp_path):
    out = tmp_path / "schema.md"
    done = subprocess.run([sys.executable, str(SCRIPT), "--out", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert out.read_text() == DOCS.read_text(), (
        "docs/schema.md is stale: run python scripts/gen_schema_docs.py and commit the result")


def test_every_table_and_view_is_documented_with_an_example_and_its_output():
    text = DOCS.read_text()
    generator = load_generator()
    for name in (*TENANT_TABLES, "forge_schema", *VIEW_NAMES):
        section = text.split(f"### `{name}`\n", 1)[1].split("\n### ", 1)[0]
        assert "| column | type |" in section, name
        assert "```sql\nSELECT" in section, name
        example_output = section.split("```\n\n", 1)[1]
        assert example_output.startswith("| ") and "\n|---" in example_output, name
        rows = example_output.strip().splitlines()[2:]
        assert rows, f"the example of {name} shows no rows"
    assert set(generator.TABLES) == {*TENANT_TABLES, "forge_schema"}
