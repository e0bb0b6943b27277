"""Notebooks run headless through nbclient with a real kernel, for the replay tests: the kernel
talks to a fake model server and keeps its history in one DuckDB file, so a second run of the
same notebook (a fresh kernel, as Restart & Run All) finds the first run's turns."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

LOAD = "%load_ext forge_jupyter"


def notebook(*sources: str) -> Any:
    """A notebook of code cells (each with its own id), the extension loaded first."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in (LOAD, *sources)]
    return nb


def run(nb: Any, root: Path, api_base: str | None, *, name: str = "analysis.ipynb",
        env: dict[str, str] | None = None, allow_errors: bool = False) -> Any:
    """Execute a copy of ``nb`` as ``root/name`` in a fresh kernel; the executed copy."""
    nb = nbformat.from_dict(nb)
    base = {"FORGE_MODEL": "openai/gpt-4o-mini", "FORGE_DB": str(root / "forge.duckdb"),
            "FORGE_WIDGET": "off", "FORGE_API_KEY": "sk-fake", "JPY_SESSION_NAME": name,
            "FORGE_PERMISSIONS": "python:*=allow"}
    if api_base is not None:
        base["FORGE_API_BASE"] = api_base
    client = NotebookClient(nb, timeout=120, record_timing=True, kernel_name="python3", allow_errors=allow_errors,
                            resources={"metadata": {"path": str(root)}})
    client.km = client.create_kernel_manager()
    client.km.kernel_spec.argv[0] = sys.executable  # this environment's Python
    full = {**os.environ, **base, **(env or {})}
    for key in [k for k, v in full.items() if v is None]:
        del full[key]
    client.execute(env=full)
    return nb


def shown(cell: Any) -> str:
    """What a reader sees of a cell: its streams, its text/plain outputs, and errors."""
    out: list[str] = []
    last_stream = None
    for o in cell.outputs:
        if o.output_type == "stream":
            # The kernel may send one print in several stream messages (a flush fell between
            # its pieces); a reader sees them as one text, as Lab draws them.
            if last_stream == o.name:
                out[-1] += o.text
            else:
                out.append(o.text)
            last_stream = o.name
            continue
        last_stream = None
        if o.output_type == "error":
            out.append(f"{o.ename}: {o.evalue}")
        else:
            out.append(str(o.get("data", {}).get("text/plain", "")))
    return "\n".join(out)
