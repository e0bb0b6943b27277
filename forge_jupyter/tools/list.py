"""The `list` tool: what a directory holds, directories first."""

from __future__ import annotations

import os

from ..errors import ToolError
from .base import Tool, ToolContext, ToolResult, tool_from_function
from .glob import GlobPattern
from .paths import display_path, path_subject, resolve_inside, session_root
from .truncate import MAX_ENTRIES, and_more, plural

DESCRIPTION = f"""List one directory under the session's root (not recursive): directories \
first (ending in `/`), then files, by name; a link shows `name -> target`. Shows the first \
{MAX_ENTRIES} entries, then "… and N more". To find files at any depth use glob; to search \
their contents, grep."""


def list_directory(path: str = ".", ignore: list[str] | None = None, *, ctx: ToolContext) -> ToolResult:
    """List one directory.

    path: Directory to list, relative to the root.
    ignore: Glob patterns of entries to leave out, e.g. ["*.pyc", "build"].
    """
    root = session_root(ctx, "list")
    target = resolve_inside(root, path, must_exist=True)
    shown_path = display_path(root, target)
    if not target.is_dir():
        raise ToolError(f"{shown_path} is a file, not a directory; use read to see its lines.")
    patterns = [GlobPattern(p) for p in ignore or []]
    dirs: list[str] = []
    files: list[str] = []
    with os.scandir(target) as it:
        for entry in it:
            rel = display_path(root, target / entry.name)
            if any(p.match(rel) for p in patterns):
                continue
            is_dir = entry.is_dir()  # follows a link: a link to a directory lists as one
            shown = entry.name + ("/" if is_dir else "")
            if entry.is_symlink():
                shown += f" -> {os.readlink(entry.path)}"
            (dirs if is_dir else files).append(shown)
    entries = sorted(dirs, key=str.lower) + sorted(files, key=str.lower)
    header = f"{shown_path}/ — {plural(len(dirs), 'directory', 'directories')}, {plural(len(files), 'file')}" + (
        " (after ignore patterns)" if patterns else "")
    lines = [header, *entries[:MAX_ENTRIES]]
    more = and_more(len(entries) - MAX_ENTRIES, "pass ignore patterns, or use glob to narrow")
    if more:
        lines.append(more)
    if not entries:
        lines.append("(empty)")
    return ToolResult("\n".join(lines), title=shown_path,
                      metadata={"path": shown_path, "count": len(entries),
                                "truncated": len(entries) > MAX_ENTRIES})


def list_tool() -> Tool:
    tool = tool_from_function(list_directory, name="list", description=DESCRIPTION)
    tool.subject = path_subject()  # rules match the folder searched, normalized
    return tool
