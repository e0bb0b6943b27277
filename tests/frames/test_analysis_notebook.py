"""notebooks/analysis.ipynb runs, in a real kernel, over a store filled by a scripted run, and
draws its plots."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "analysis.ipynb"


@pytest.mark.parametrize("run", ["duckdb"], indirect=True)
def test_the_analysis_notebook_runs_and_draws_its_plots(run, monkeypatch, tmp_path):
    run.forge.flush()
    monkeypatch.setenv("FORGE_DB", str(run.path))
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not cell.get("outputs") for cell in notebook.cells if cell.cell_type == "code"), (
        "commit the notebook without outputs")
    client = NotebookClient(notebook, kernel_name="python3", timeout=120,
                            resources={"metadata": {"path": str(tmp_path)}})
    client.km = client.create_kernel_manager()
    client.km.kernel_spec.argv[0] = sys.executable  # the kernel runs this environment's Python
    client.execute(env=dict(os.environ))  # raises CellExecutionError on any error

    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert not [o for o in outputs if o.output_type == "stream" and o.name == "stderr"
                and "Traceback" in o.text]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) >= 3  # cost per day and model, tools, context per step
    tables = "".join(o["data"].get("text/plain", "") for o in outputs if "data" in o)
    assert "openai/gpt-4" in tables and "boom" in tables and "context overflow" in tables
