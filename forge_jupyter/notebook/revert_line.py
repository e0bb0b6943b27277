"""In a kernel, each ``%forge revert …`` line becomes a top-level ``await`` of the revert
(revert.py), so it can wait for the page to take the cells back — the way ``%%forge`` cells
are awaited (magics.transform_forge_cells). Elsewhere the line magic runs it."""

from __future__ import annotations

import re
from typing import Any

_LINE = re.compile(r"^%forge\s+revert\b(.*)$")


def transform_revert_lines(lines: list[str]) -> list[str]:
    if (not any(line.startswith("%forge") for line in lines)
            or (lines and lines[0].startswith("%%"))):  # a cell magic's body is its own
        return lines
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None or getattr(shell, "kernel", None) is None or not hasattr(shell, "_forge_revert"):
        return lines
    out = []
    for line in lines:
        m = _LINE.match(line.rstrip("\n"))
        out.append(f"await get_ipython()._forge_revert({m.group(1).strip()!r})\n" if m else line)
    return out


# as transform_forge_cells: IPython's "is this cell complete?" check skips it
transform_revert_lines.has_side_effects = True  # type: ignore[attr-defined]


def awaiter(controller: Any) -> Any:
    """What ``get_ipython()._forge_revert(rest)`` calls: the revert, to await."""
    def run(rest: str) -> Any:
        from .revert import revert

        return revert(controller, rest)

    return run
