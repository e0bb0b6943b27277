"""What the side panel's box offers after an ``@`` (docs/notebook-context.md, "Pointing at
things"): the notebook's variables, the cells that ran as ``In [N]``, ``error`` when a cell
failed, ``file:`` paths under the root and ``cell:`` ids — each as the grammar reads it back,
so accepting one writes a mention that resolves.

Read from what the kernel already holds (the namespace, the run log, one folder of the root):
nothing is evaluated, no file is opened, and the answer is bounded (``MAX_ITEMS``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from ..cells.run_log import RunLog
from .grammar import CELL_ID

MAX_ITEMS = 50  # entries one answer holds
MAX_QUERY = 512  # characters of what follows the @ that the kernel reads
MAX_DETAIL = 80  # characters of an entry's detail (a type, a cell's first line)
MAX_SCAN = 2000  # directory entries looked at for one file: completion


@dataclass(frozen=True)
class Item:
    insert: str  # what follows the @: df, In[3], error, file:data/, cell:ab12
    detail: str


def _short(text: str) -> str:
    line = next((s.strip() for s in text.splitlines() if s.strip()), "")
    return line if len(line) <= MAX_DETAIL else line[:MAX_DETAIL - 1] + "…"


def _variables(namespace: dict[str, Any]) -> list[Item]:
    from ...tools.variables import visible_names

    return [Item(n, type(namespace[n]).__name__) for n in visible_names(namespace)]


def _files(root: str, query: str) -> list[Item]:
    """The entries of the folder ``query`` names under ``root`` (one level; folders end in /).
    A folder outside the root, hidden entries and links are not offered: resolving would
    refuse them (the read tool's rules)."""
    folder, _, _stem = query.rpartition("/")
    if any(part.startswith(".") for part in folder.replace("\\", "/").split("/")):
        return []  # inside a hidden folder (.forge/, .git/, ../): nothing is offered
    real_root = os.path.realpath(root)
    where = os.path.realpath(os.path.join(real_root, folder))
    if where != real_root and not where.startswith(real_root + os.sep):
        return []
    out: list[Item] = []
    try:
        with os.scandir(where) as entries:
            for n, entry in enumerate(entries):
                if n >= MAX_SCAN:
                    break
                if entry.name.startswith(".") or entry.is_symlink():
                    continue
                is_dir = entry.is_dir(follow_symlinks=False)
                path = (folder + "/" if folder else "") + entry.name + ("/" if is_dir else "")
                out.append(Item("file:" + path, "folder" if is_dir else "file"))
    except OSError:
        return []
    return sorted(out, key=lambda i: i.insert)


def candidates(query: str, namespace: dict[str, Any], log: RunLog | None,
               root: str | None) -> list[Item]:
    """The entries whose text starts with ``query`` (case folded), variables first."""
    query = query[:MAX_QUERY]
    items: list[Item] = []
    if query.startswith("file:"):
        items = _files(root, query[5:]) if root else []
    else:
        items = _variables(namespace)
        runs = [r for r in (list(log.runs) if log is not None else []) if not r.forge]
        counted = {r.execution_count: r for r in runs if r.execution_count}
        items += [Item(f"In[{n}]", _short(r.source)) for n, r in sorted(counted.items(),
                                                                      reverse=True)]
        error = log.last_error() if log is not None else None
        if error is not None:
            items.append(Item("error", _short(error.line())))
        if root:
            items.append(Item("file:", "a file under the root"))
        cells = {r.cell_id: r for r in runs if r.cell_id and CELL_ID.fullmatch(r.cell_id)}
        items += [Item(f"cell:{i}", (f"In [{r.execution_count}] " if r.execution_count else "")
                       + _short(r.source)) for i, r in reversed(cells.items())]
    folded = query.casefold()
    return [i for i in items if i.insert.casefold().startswith(folded)][:MAX_ITEMS]
