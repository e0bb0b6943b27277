"""The README's main job: notebooks/quickstart.ipynb runs end to end on the offline demo model."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]
PROVIDER_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "MISTRAL_API_KEY",
                 "DEEPSEEK_API_KEY", "GROQ_API_KEY", "OPENROUTER_API_KEY", "XAI_API_KEY")


def test_quickstart_runs_on_the_offline_demo_model(tmp_path, monkeypatch):
    for key in PROVIDER_KEYS + ("FORGE_MODEL", "FORGE_API_BASE", "FORGE_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("FORGE_DB", str(tmp_path / "quickstart.duckdb"))
    nb = nbformat.read(ROOT / "notebooks" / "quickstart.ipynb", as_version=4)
    client = NotebookClient(nb, timeout=180, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}})
    client.km = client.create_kernel_manager()
    client.km.kernel_spec.argv[0] = sys.executable  # this environment's Python
    client.execute(env=dict(os.environ))  # raises CellExecutionError on any error

    def text(cell) -> str:
        out = []
        for o in cell.get("outputs", []):
            out.append(o.get("text", ""))
            data = o.get("data", {})
            out.append(data.get("text/markdown", "") + data.get("text/plain", ""))
        return "".join(out)

    forge_cells = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith("%%forge")]
    assert len(forge_cells) == 3
    first = text(forge_cells[0])
    assert "offline demo model" in first and "variables" in first and "sales" in first
    fork = next(c for c in nb.cells if c.cell_type == "code" and c.source == "%forge fork")
    assert "Forked into session" in text(fork)
    sessions = next(c for c in nb.cells if "forge.sessions()" in c.source)
    assert "text/html" in sessions.outputs[0]["data"]  # a DataFrame
