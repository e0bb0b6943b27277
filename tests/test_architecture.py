"""The house rules of docs/architecture.md, checked on the source: dependencies point one way.

- no import cycle among the package's modules, package ``__init__``s included (a name read back
  from a package's ``__init__`` is an edge to it; imports inside functions — lazy ones — count
  as edges too, except under ``TYPE_CHECKING``);
- ``session/`` imports neither IPython nor ``forge.py``; ``store/`` imports no litellm;
- nothing outside ``testing/`` imports it: the product (the offline demo model of ``demo/``
  included) runs without the test kit;
- no module over ``MAX_LINES`` lines (``testing/`` excepted: the fake server's test kit).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "forge_jupyter"
MAX_LINES = 400


def _module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _modules(package: Path = PACKAGE) -> dict[str, Path]:
    return {_module_name(p, package): p for p in package.rglob("*.py")}


def _ancestors(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The package modules that importing ``name`` runs, as Python runs them.

    Every import counts, lazy ones inside functions too; only ``TYPE_CHECKING`` blocks are left
    out. ``from pkg import thing`` reaches ``pkg.thing`` when that is a module, else the
    package's ``__init__`` (whose namespace holds ``thing``); importing ``a.b.c`` also runs the
    ``__init__`` of ``a`` and ``a.b``. So a package ``__init__`` that imports a module which
    reads a name back from that ``__init__`` is a cycle, as it is at run time.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    targets: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            targets.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            targets.update(f"{mod}.{a.name}" if f"{mod}.{a.name}" in known else mod
                           for a in node.names)
    # The packages ``name`` lives in have begun to run before it: running them is no edge, but
    # reading a name from one (``from .. import __version__``) is.
    outer = set(_ancestors(name))
    found = targets | {a for t in targets for a in _ancestors(t) if a not in outer}
    return {m for m in found if m in known and m != name}


def _graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    mods = _modules(package)
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


def test_no_import_cycles_among_the_package_modules():
    assert _cycles(_graph()) == []


def _package(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / "pkg" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "pkg" / name).write_text(text, encoding="utf-8")
    return root / "pkg"


def test_a_name_read_back_from_the_package_init_closes_a_cycle(tmp_path):
    # The shape of tools/web_http.py's old `from .. import __version__`.
    pkg = _package(tmp_path, {
        "__init__.py": "VERSION = '1'\ndef make():\n    from .tools.web import agent\n",
        "tools/__init__.py": "",
        "tools/web.py": "from .. import VERSION\nagent = VERSION\n",
    })
    assert _cycles(_graph(pkg)) == [["pkg", "pkg.tools.web"]]


def test_a_lazy_import_through_a_package_init_closes_a_cycle(tmp_path):
    # The shape of model.py's (now message.py) old lazy `from .render import message_html`.
    pkg = _package(tmp_path, {
        "__init__.py": "",
        "message.py": "class M:\n    def html(self):\n        from .render.num import f\n",
        "render/__init__.py": "from .record import html\n",
        "render/num.py": "f = 1\n",
        "render/record.py": "from ..message import M\nhtml = M\n",
    })
    assert _cycles(_graph(pkg)) == [["pkg.message", "pkg.render", "pkg.render.record"]]


def test_sibling_imports_and_type_checking_imports_are_no_cycle(tmp_path):
    pkg = _package(tmp_path, {
        "__init__.py": "from .a import A\n",
        "a.py": "from typing import TYPE_CHECKING\nfrom . import b\nA = b\n"
                "if TYPE_CHECKING:\n    from . import A\n",
        "b.py": "from .c import C\n",
        "c.py": "C = 1\n",
    })
    assert _cycles(_graph(pkg)) == []


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


def test_the_product_imports_no_test_support():
    graph = _graph()
    leaning = {name: sorted(t for t in targets if t.startswith("forge_jupyter.testing"))
               for name, targets in graph.items() if not name.startswith("forge_jupyter.testing")}
    assert {name: ts for name, ts in leaning.items() if ts} == {}


def test_no_module_needs_a_table_of_contents():
    big = {str(p.relative_to(PACKAGE)): n for p in PACKAGE.rglob("*.py")
           if "testing" not in p.parts
           and (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert big == {}


# -- the Host seam: what the session core and the tools use of the Forge -----------------------

PROBED = re.compile(r"\b(forge|host)\b")


def _probes(tree: ast.AST) -> list[str]:
    """``getattr``/``hasattr`` on the owner (``forge``, ``host``, ``ctx.forge`` …), and tools
    reaching ``ctx.forge``: what a typed seam makes unnecessary."""
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in ("getattr", "hasattr") and node.args
                and PROBED.search(ast.unparse(node.args[0]))):
            found.append(ast.unparse(node))
        if isinstance(node, ast.Attribute) and node.attr == "forge" \
                and isinstance(node.value, ast.Name) and node.value.id == "ctx":
            found.append(ast.unparse(node))
    return found


def _seam_files() -> list[Path]:
    return [*(PACKAGE / "session").rglob("*.py"), *(PACKAGE / "tools").rglob("*.py"),
            PACKAGE / "memory" / "tools.py"]


def test_the_core_and_the_tools_never_probe_the_forge():
    assert _probes(ast.parse("memory = getattr(ctx.forge, 'memory', None)\nctx.forge.store"))
    for path in _seam_files():
        assert _probes(ast.parse(path.read_text(encoding="utf-8"))) == [], path


def _members(protocol: type) -> set[str]:
    names: set[str] = set()
    for cls in protocol.__mro__:
        if cls.__module__ == "forge_jupyter.session.host":
            names |= set(cls.__annotations__) | {n for n in vars(cls) if not n.startswith("_")}
    return names


def _read_of_owner(tree: ast.AST) -> set[str]:
    """What the core reads of its owner: ``host.X``, ``forge.X``, ``session.forge.X``,
    ``ctx.host.X`` (``forge`` in session/ is the Host a SessionHandle holds)."""
    owner = {"host", "forge"}
    read = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        base = node.value
        if isinstance(base, ast.Name) and base.id in owner:
            read.add(node.attr)
        elif isinstance(base, ast.Attribute) and base.attr in owner \
                and isinstance(base.value, ast.Name) and base.value.id in ("session", "ctx", "self"):
            read.add(node.attr)
    return read


def test_the_session_core_reads_of_its_owner_only_what_the_host_seam_declares():
    from forge_jupyter.session.host import Host
    from forge_jupyter.session.services import Services

    members = _members(Host)
    assert "store" not in members and "services" in members  # the services come as one
    assert _read_of_owner(ast.parse("host.services.store\nsession.forge.bus")) == {"services",
                                                                                   "bus"}
    for path in (PACKAGE / "session").rglob("*.py"):
        unknown = _read_of_owner(ast.parse(path.read_text(encoding="utf-8"))) - members
        assert unknown == set(), f"{path.name} reads {sorted(unknown)} of its owner; declare " \
            "them in session/host.py (or reach them through Host.services)"
    # and Services is what the Forge is composed of
    from forge_jupyter import Forge

    forge = Forge(db=":memory:", load_plugins=False, builtin_tools=False)
    try:
        assert isinstance(forge.services, Services)
        for name in Services.__dataclass_fields__:
            assert getattr(forge, name) is getattr(forge.services, name), name
    finally:
        forge.close()
