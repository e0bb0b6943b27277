"""What the package installs is enough for what it ships (issue 29, item 5): every module the
bundled notebooks import, and matplotlib, which the offline demo's chart turn draws with
(``DataFrame.plot``, forge_jupyter/demo/plans.py), are in the package's own dependencies — not
only in the test extra, which is why the quickstart's chart failed after a plain install."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]


def _required() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = {re.split(r"[<>=!~ \[;]", d, maxsplit=1)[0] for d in project["dependencies"]}
    return {n.lower().replace("_", "-") for n in names}


def _notebook_imports() -> set[str]:
    found: set[str] = set()
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type != "code" or cell.source.lstrip().startswith("%%"):
                continue
            code = "\n".join(line for line in cell.source.splitlines()
                             if not line.lstrip().startswith(("%", "!")))
            for node in ast.walk(ast.parse(code)):
                if isinstance(node, ast.Import):
                    found |= {a.name.split(".")[0] for a in node.names}
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    found.add(node.module.split(".")[0])
    return found


def test_what_the_bundled_notebooks_and_the_demo_chart_import_is_installed_with_the_package():
    required = _required()
    dists = packages_distributions()
    missing = []
    for module in sorted(_notebook_imports() | {"matplotlib"}):
        if module in sys.stdlib_module_names or module == "forge_jupyter":
            continue
        names = {d.lower().replace("_", "-") for d in dists.get(module, [module])}
        if not names & required:
            missing.append(f"{module} ({', '.join(sorted(names))})")
    assert not missing, f"add to [project] dependencies in pyproject.toml: {missing}"
