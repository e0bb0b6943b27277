"""Terminal IPython: one blank line ends a typed ``%%forge`` cell (docs/notebook.md).

IPython's completeness check ends a cell magic at a blank line, but the text it is handed on
Enter loses the last line break (``splitlines``), so a typed cell magic runs only at the
*second* blank line. A ``%%forge`` prompt ends at the first, as the docs say: the check sees
the text as typed. Other cell magics keep IPython's own rule; a kernel is not touched (its
frontend decides when a cell runs).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Check = Callable[[str], tuple[str, Any]]


def _is_forge_cell(text: str) -> bool:
    first = text.split("\n", 1)[0]
    return first == "%%forge" or (first.startswith("%%forge") and first[7:8].isspace())


def ends_at_blank_line(check: Check) -> Check:
    """``check`` (IPython's ``check_complete``), but a ``%%forge`` cell with a prompt is
    complete once its text ends in a blank line."""

    def check_complete(text: str) -> tuple[str, Any]:
        head, _, body = text.partition("\n")
        if _is_forge_cell(text) and body.strip() and body.endswith("\n"):
            return "complete", None  # the prompt, then Enter on an empty line
        return check(text)

    check_complete.forge_original = check  # type: ignore[attr-defined]
    return check_complete


def install(shell: Any) -> None:
    if getattr(shell, "kernel", None) is not None or hasattr(shell.check_complete, "forge_original"):
        return
    shell.check_complete = ends_at_blank_line(shell.check_complete)


def uninstall(shell: Any) -> None:
    original = getattr(shell.check_complete, "forge_original", None)
    if original is not None:
        shell.check_complete = original
