"""The `glob` tool: files whose path matches a pattern, newest first."""

from __future__ import annotations

import heapq
import re

import regex

from ..errors import ToolError
from .base import Tool, ToolContext, ToolResult, tool_from_function
from .paths import SKIP_DIRS, locate, path_subject, session_root
from .pattern import compile_pattern, full_match, stopped
from .reach import check, fence_of, walk
from .truncate import MAX_ENTRIES, and_more

DESCRIPTION = f"""Find files under the session's root by path pattern, newest first: `*` \
within a name, `**` across directories, `?` one character, `[abc]` a set, `{{a,b}}` \
alternatives; a pattern without `/` matches file names at any depth. Skips \
{", ".join(sorted(SKIP_DIRS))}. Shows the first {MAX_ENTRIES} paths, relative to the root, \
then "… and N more"."""


def _translate(pattern: str) -> str:
    out, i, n = [], 0, len(pattern)
    while i < n:
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = pattern.find("]", i + 2)
            if j == -1:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1:j]
                neg = body[:1] in ("!", "^")
                body = body[1:] if neg else body
                out.append("[" + ("^" if neg else "") + body.replace("\\", "\\\\") + "]")
                i = j
        elif c == "{":
            depth, j = 1, i + 1
            while j < n and depth:
                depth += {"{": 1, "}": -1}.get(pattern[j], 0)
                j += 1
            if depth:
                out.append(re.escape(c))
            else:
                out.append("(?:" + "|".join(_translate(a) for a in _split_alternatives(pattern[i + 1:j - 1])) + ")")
                i = j - 1
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _split_alternatives(body: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for k, c in enumerate(body):
        depth += {"{": 1, "}": -1}.get(c, 0)
        if c == "," and depth == 0:
            parts.append(body[start:k])
            start = k + 1
    return parts + [body[start:]]


class GlobPattern:
    """A glob with `**`, `*`, `?`, `[abc]` and `{a,b}`. Without a `/` it matches a name at
    any depth (like .gitignore and ripgrep); with one it matches the whole relative path."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        stripped = pattern[2:] if pattern.startswith("./") else pattern
        self.anchored = "/" in stripped.rstrip("/")
        # the regex engine, with a deadline per path (pattern.py): `*?*?*?…` cannot backtrack
        # for long
        self._rx = compile_pattern(_translate(stripped.strip("/")) + r"\Z", regex.DOTALL)

    def match(self, rel: str) -> bool:
        """Whether the relative posix path ``rel`` matches."""
        return full_match(self._rx, rel if self.anchored else rel.rsplit("/", 1)[-1],
                          shown=self.pattern, where=f"the path {rel!r}")


def glob_files(pattern: str, path: str = ".", *, ctx: ToolContext) -> ToolResult:
    """Find files by path pattern, newest first.

    pattern: Glob pattern, e.g. `**/*.csv` or `data/*.parquet`.
    path: Directory to search, relative to the root.
    """
    root = session_root(ctx, "glob")
    fence = fence_of(ctx)
    base = locate(root, path, must_exist=True)
    if not base.path.is_dir():
        raise ToolError(f"{base.shown} is a file; glob's path must be a directory.")
    check(fence, base)
    matcher = GlobPattern(pattern)
    found: list[tuple[float, str]] = []
    for file in walk(base, fence):  # regular files the model may read, links to them
        if ctx.stop.is_set():
            raise stopped("glob")
        if matcher.match(file.rel):
            found.append((file.mtime(), file.shown))
    newest = heapq.nsmallest(MAX_ENTRIES, found, key=lambda m: (-m[0], m[1]))
    where = base.shown
    if not found:
        return ToolResult(f"No files match {pattern!r} in {where}.", title=pattern,
                          metadata={"count": 0, "truncated": False})
    lines = [p for _, p in newest]
    more = and_more(len(found) - MAX_ENTRIES, "use a narrower pattern or path")
    if more:
        lines.append(more)
    return ToolResult("\n".join(lines), title=pattern,
                      metadata={"count": len(found), "truncated": len(found) > MAX_ENTRIES})


def glob_tool() -> Tool:
    tool = tool_from_function(glob_files, name="glob", description=DESCRIPTION)
    tool.subject = path_subject()  # rules match the folder searched, normalized
    return tool
