"""A file change as a unified diff: the PatchFile write, edit and apply_patch return."""

from __future__ import annotations

import difflib

from ..message import PatchFile

NO_NEWLINE = "\\ No newline at end of file\n"


def _lines(text: str) -> list[str]:
    """Lines split at "\n" only (str.splitlines also splits at \r, \f, \x1c…, unlike patch)."""
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def unified_diff(path: str, before: str | None, after: str) -> PatchFile:
    """The change of ``path`` going from ``before`` to
    ``after`` (``before=None``: the file was created). The diff applies with ``patch -p1``."""
    lines = difflib.unified_diff(
        _lines(before or ""), _lines(after),
        fromfile="/dev/null" if before is None else f"a/{path}", tofile=f"b/{path}")
    out: list[str] = []
    additions = deletions = 0
    for i, line in enumerate(lines):
        if i >= 2:  # past the two header lines, whose "---"/"+++" are not changes
            if line.startswith("+"):
                additions += 1
            elif line.startswith("-"):
                deletions += 1
        if not line.endswith("\n"):
            line = line + "\n" + NO_NEWLINE
        out.append(line)
    return PatchFile(path=path, diff="".join(out), additions=additions, deletions=deletions)
