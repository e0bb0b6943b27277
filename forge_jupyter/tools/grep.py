"""The `grep` tool: lines matching a regular expression, as `file:line: text`."""

from __future__ import annotations

from typing import BinaryIO

from ..errors import ToolError
from .base import Tool, ToolContext, ToolResult, tool_from_function
from .glob import GlobPattern
from .paths import (
    BINARY_SAMPLE,
    SKIP_DIRS,
    iter_lines,
    locate,
    looks_binary,
    path_subject,
    session_root,
)
from .pattern import LinePattern, stopped
from .reach import Fence, Found, check, fence_of, open_readable, walk
from .truncate import MAX_ENTRIES, MAX_LINE_CHARS, and_more, cut_line, plural

DESCRIPTION = f"""Search file contents under the session's root for a regular expression, line \
by line (`(?i)` at the start ignores case). Prints `path:line: text` in path order, the first \
{MAX_ENTRIES} matches then "… and N more"; a matched line over {MAX_LINE_CHARS:,} characters is \
cut. Skips binary files and {", ".join(sorted(SKIP_DIRS))}. To read around a match: read with \
offset = line - 1."""

_SEARCH_CAP = 1 << 20  # bytes of one line searched; the rest of a longer line is not


def grep(pattern: str, path: str = ".", include: str | None = None, *,
         ctx: ToolContext) -> ToolResult:
    """Search file contents for a regular expression.

    pattern: Regular expression (Python `re` syntax).
    path: Directory (searched recursively) or file, relative to the root.
    include: Glob of the files to search, e.g. `*.py` (without `/`: names at any depth).
    """
    root = session_root(ctx, "grep")
    rx = LinePattern(pattern)  # matched with a deadline, the GIL given up (pattern.py)
    fence = fence_of(ctx)
    base = locate(root, path, must_exist=True)
    matcher = GlobPattern(include) if include else None
    hits: list[str] = []
    count = 0
    in_files = 0
    if not base.path.is_dir():
        # a FIFO, a device or the store's file is refused here, before anything waits on it
        with open_readable(fence, base) as f:
            if _is_binary(f):
                raise ToolError(f"{base.shown} is a binary file; grep searches text only.")
            count = _search(f, rx, base.shown, hits, ctx)
        in_files = bool(count)
    else:
        check(fence, base)
        # each file opened where the walk is (its folder's descriptor), nothing listed first
        for file in walk(base, fence):  # regular files the model may read, links to them
            if ctx.stop.is_set():
                raise stopped("grep")
            if matcher is None or matcher.match(file.rel):
                found = _search_found(file, fence, rx, hits, ctx)
                count += found
                in_files += bool(found)
    if not count:
        return ToolResult(f"No matches for {pattern!r} in {base.shown}.",
                          title=pattern, metadata={"matches": 0, "truncated": False})
    lines = [f"{plural(count, 'match', 'matches')} in {plural(in_files, 'file')}", *hits]
    more = and_more(count - len(hits), "narrow the pattern, the path or include")
    if more:
        lines.append(more)
    return ToolResult("\n".join(lines), title=pattern,
                      metadata={"matches": count, "files": in_files, "truncated": count > len(hits)})


def _is_binary(f: BinaryIO) -> bool:
    binary = looks_binary(f.read(BINARY_SAMPLE))
    f.seek(0)
    return binary


def _search_found(file: Found, fence: Fence, rx: LinePattern, hits: list[str],
                  ctx: ToolContext) -> int:
    try:
        with file.open(fence) as f:
            return 0 if _is_binary(f) else _search(f, rx, file.shown, hits, ctx)
    except (OSError, ToolError):  # unreadable, or changed since the walk judged it: no match
        return 0


BLOCK_CHARS = 1 << 18  # characters of lines searched at once (pattern.LinePattern)


def _search(f: BinaryIO, rx: LinePattern, shown: str, hits: list[str], ctx: ToolContext) -> int:
    """Matches of ``rx`` in ``f``; the first ones (up to MAX_ENTRIES in all) go to ``hits``."""
    found = 0
    block: list[tuple[int, str, int, int]] = []  # (line number, text, bytes kept, size)
    chars = 0
    for number, (body, size) in enumerate(iter_lines(f, _SEARCH_CAP), start=1):
        text = body.decode("utf-8", "replace").removesuffix("\r")
        block.append((number, text, len(body), size))
        chars += len(text) + 1
        if chars >= BLOCK_CHARS:
            found += _search_block(block, rx, shown, hits, ctx)
            block, chars = [], 0
    if block:
        found += _search_block(block, rx, shown, hits, ctx)
    return found


def _search_block(block: list[tuple[int, str, int, int]], rx: LinePattern, shown: str,
                  hits: list[str], ctx: ToolContext) -> int:
    if ctx.stop.is_set():
        raise stopped("grep")

    def where(i: int) -> str:
        return f"line {block[i][0]} of {shown}"

    found = 0
    for i in rx.matching([text for _, text, _, _ in block], where, ctx.stop.is_set):
        found += 1
        if len(hits) < MAX_ENTRIES:
            number, text, kept, size = block[i]
            hits.append(f"{shown}:{number}: {cut_line(text, size if size > kept else None)}")
    if ctx.stop.is_set():
        raise stopped("grep")
    return found


def grep_tool() -> Tool:
    tool = tool_from_function(grep, name="grep", description=DESCRIPTION)
    tool.subject = path_subject()  # rules match the folder searched, normalized
    return tool
