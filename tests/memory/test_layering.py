"""memory/ is a core package: it never imports IPython (the notebook surface depends on it)."""

from __future__ import annotations

import ast
from pathlib import Path

MEMORY = Path(__file__).resolve().parents[2] / "forge_jupyter" / "memory"


def test_the_memory_package_never_imports_ipython():
    for path in MEMORY.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        names |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert not any(n.split(".")[0] == "IPython" or n.endswith("notebook") for n in names), path
