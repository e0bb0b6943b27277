"""The `list` tool: what a directory holds, directories first."""

from __future__ import annotations

from ..errors import ToolError
from .base import Tool, ToolContext, ToolResult, tool_from_function
from .glob import GlobPattern
from .paths import locate, path_subject, session_root
from .reach import check, entries, fence_of
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
    fence = fence_of(ctx)
    target = locate(root, path, must_exist=True)
    shown_path = target.shown
    if not target.path.is_dir():
        raise ToolError(f"{shown_path} is a file, not a directory; use read to see its lines.")
    check(fence, target)
    patterns = [GlobPattern(p) for p in ignore or []]
    dirs: list[str] = []
    files: list[str] = []
    found, left_out = entries(target, fence)
    for entry in found:
        rel = entry.name if target.rel == "." else f"{target.rel}/{entry.name}"
        if any(p.match(rel) for p in patterns):
            continue
        shown = entry.name + ("/" if entry.is_dir else "")
        if entry.link is not None:
            shown += f" -> {entry.link}"
        (dirs if entry.is_dir else files).append(shown)
    entries_shown = sorted(dirs, key=str.lower) + sorted(files, key=str.lower)
    header = f"{shown_path}/ — {plural(len(dirs), 'directory', 'directories')}, {plural(len(files), 'file')}" + (
        " (after ignore patterns)" if patterns else "")
    if left_out:  # said, so that a file seen elsewhere is not looked for again and again
        header += (f"; {plural(left_out, 'entry', 'entries')} left out that file tools never open "
                   "(FIFOs, sockets, devices, the store's files, other sessions' outputs)")
    lines = [header, *entries_shown[:MAX_ENTRIES]]
    more = and_more(len(entries_shown) - MAX_ENTRIES, "pass ignore patterns, or use glob to narrow")
    if more:
        lines.append(more)
    if not entries_shown:
        lines.append("(empty)")
    return ToolResult("\n".join(lines), title=shown_path,
                      metadata={"path": shown_path, "count": len(entries_shown),
                                "truncated": len(entries_shown) > MAX_ENTRIES})


def list_tool() -> Tool:
    tool = tool_from_function(list_directory, name="list", description=DESCRIPTION)
    tool.subject = path_subject()  # rules match the folder searched, normalized
    return tool
