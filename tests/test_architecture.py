"""The house rules of docs/architecture.md, checked on the source: dependencies point one way.

- no import cycle among the package's modules (imports inside functions — lazy ones — count
  as edges too, except under ``TYPE_CHECKING``);
- ``session/`` imports neither IPython nor ``forge.py``; ``store/`` imports no litellm;
- no module over ``MAX_LINES`` lines (``testing/`` excepted: the fake server's test kit).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "forge_jupyter"
MAX_LINES = 400


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The package modules ``name`` imports, type-checking-only imports left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            targets = [mod] + [f"{mod}.{a.name}" for a in node.names]
        for t in targets:
            if t in known and t != name:
                found.add(t)
    return found


def _graph() -> dict[str, set[str]]:
    mods = _modules()
    known = set(mods)
    return {name: _imports(name, path, known) for name, path in mods.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def _without_packages(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    # A package's __init__ re-exporting its own submodules is not a cycle of design.
    return {m: {d for d in deps if not (m.startswith(d + ".") or d.startswith(m + "."))}
            for m, deps in graph.items()}


def test_no_import_cycles_among_the_package_modules():
    assert _cycles(_without_packages(_graph())) == []


def test_session_core_imports_neither_ipython_nor_the_facade():
    for path in (PACKAGE / "session").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        names |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert not any(n.split(".")[0] == "IPython" for n in names), path
        assert "forge" not in names and "forge_jupyter.forge" not in names, path
        assert not any(isinstance(n, ast.ImportFrom) and n.level == 2 and n.module == "forge"
                       for n in ast.walk(tree)), path


def test_store_imports_no_litellm():
    for path in (PACKAGE / "store").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        names |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert not any(n.split(".")[0] == "litellm" or n.endswith("llm") for n in names), path


def test_no_module_needs_a_table_of_contents():
    big = {str(p.relative_to(PACKAGE)): n for p in PACKAGE.rglob("*.py")
           if "testing" not in p.parts
           and (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert big == {}
