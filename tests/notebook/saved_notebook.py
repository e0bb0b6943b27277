"""A notebook executed headless (nbclient, widget state stored, as nbconvert --execute does),
its %%forge cells answered by a fake model server; and what its saved file holds.

Shared by tests/notebook/test_saved_notebook.py and benchmarks/bench_saved_notebook.py.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

from forge_jupyter.testing import FakeModelServer, Turn

WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
TURN_WIDGET = "forge_jupyter.notebook.widget.TurnWidget"
LOAD = "%load_ext forge_jupyter"

# What TurnWidget saved before the bootstrap: the whole renderer as _esm, the CSS as _css.
AS_BEFORE = """from forge_jupyter.notebook import widget, widget_code
widget.TurnWidget._esm = (widget_code.STATIC / "widget.js").read_text()
widget.TurnWidget._css = (widget_code.STATIC / "widget.css").read_text()"""


def forge_cells(n: int) -> list[str]:
    return [f"%%forge\nSay hello, number {i}." for i in range(n)]


def script(server: FakeModelServer, n: int) -> None:
    for i in range(n):
        server.add(Turn.text(f"Hello number {i}: a short answer, **in Markdown**."))


def execute(cells: list[str], server: FakeModelServer, root: Path, timeout: float = 180,
            settings: dict[str, str] | None = None) -> Any:
    """Run ``cells`` in a fresh kernel of this Python; the executed notebook, as saved.
    ``settings``: more ``FORGE_*`` variables for the kernel."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(src) for src in cells]
    env = {**os.environ, "FORGE_MODEL": "openai/fake-model", "FORGE_API_BASE": server.openai_base,
           "FORGE_API_KEY": "sk-fake", "FORGE_DB": str(root / "forge.duckdb"),
           "LITELLM_LOCAL_MODEL_COST_MAP": "True", **(settings or {})}
    env.pop("FORGE_WIDGET", None)
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", store_widget_state=True,
                            resources={"metadata": {"path": str(root)}})
    client.km = client.create_kernel_manager()
    client.km.kernel_spec.argv[0] = sys.executable
    client.execute(env=env)
    return nb


def turn_widget_states(nb: Any) -> list[dict[str, Any]]:
    """The saved state of each TurnWidget model."""
    models = nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    return [m["state"] for m in models.values() if m["state"].get("_anywidget_id") == TURN_WIDGET]


def _size(obj: Any) -> int:
    return len(json.dumps(obj, indent=1, sort_keys=True, ensure_ascii=False).encode())  # as saved


def saved_bytes(nb: Any) -> dict[str, int]:
    """Bytes of the saved file, of its widget state, and of its cells' outputs."""
    return {"file": len(nbformat.writes(nb).encode()),
            "widget_state": _size(nb.metadata.get("widgets", {})),
            "outputs": sum(_size(c.get("outputs", [])) for c in nb.cells)}
