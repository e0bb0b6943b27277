"""Saved-notebook bytes per %%forge cell, before and after the widget's bootstrap (issue 13,
item 4). Prints figures.

    .venv/bin/python benchmarks/bench_saved_notebook.py [--cells N]

A notebook of N short %%forge cells runs headless (nbclient with widget state stored, as
`jupyter nbconvert --execute` does) against the fake model server, twice in fresh kernels:
"before" first sets TurnWidget's _esm and _css back to the whole renderer and its CSS (what
every widget's saved state carried until now), "after" is the package as it is (the ~1.3 KB
bootstrap; the renderer comes from the labextension or, on request, from the kernel).
Bytes per cell: the saved file's size minus the same file without the %%forge cells and their
widget state, divided by N; also split into widget state and the cells' own JSON.
"""

from __future__ import annotations

import argparse
import copy
import sys
import tempfile
from pathlib import Path
from typing import Any

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "notebook"))

from _small import HELP  # noqa: E402 — benchmarks/ is the script's folder
from saved_notebook import (  # noqa: E402
    AS_BEFORE,
    LOAD,
    _size,
    execute,
    forge_cells,
    script,
    turn_widget_states,
)

from forge_jupyter.testing import FakeModelServer  # noqa: E402


def per_cell(nb: Any, n: int) -> dict[str, float]:
    bare = copy.deepcopy(nb)
    bare.cells = [c for c in bare.cells if not c.source.startswith("%%forge")]
    bare.metadata.pop("widgets", None)
    forge = [c for c in nb.cells if c.source.startswith("%%forge")]
    return {"file": (len(nbformat.writes(nb).encode()) - len(nbformat.writes(bare).encode())) / n,
            "widget state": _size(nb.metadata.get("widgets", {})) / n,
            "cell (source + outputs)": sum(_size(c) for c in forge) / n,
            "_esm": sum(len(s.get("_esm", "")) for s in turn_widget_states(nb)) / n}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cells", type=int, default=5)
    ap.add_argument("--small", action="store_true", help=HELP)
    parsed = ap.parse_args()
    n = 1 if parsed.small else parsed.cells
    rows: dict[str, dict[str, float]] = {}
    with FakeModelServer() as server:
        for label, prelude in (("before", [AS_BEFORE]), ("after", [])):
            with tempfile.TemporaryDirectory() as root:
                script(server, n)
                nb = execute([LOAD, *prelude, *forge_cells(n)], server, Path(root))
                rows[label] = per_cell(nb, n)
    print(f"Saved notebook, {n} %%forge cells executed headless (nbclient, widget state stored)")
    print(f"{'bytes per %%forge cell':<28}{'before':>10}{'after':>10}{'after/before':>14}")
    for key in rows["before"]:
        b, a = rows["before"][key], rows["after"][key]
        print(f"{'  ' + key if key != 'file' else 'the saved file':<28}{b:>10,.0f}{a:>10,.0f}"
              f"{(a / b if b else 0):>13.2f}x")


if __name__ == "__main__":
    main()
