"""The `read` tool: a text file's lines, numbered like `cat -n`, a page at a time."""

from __future__ import annotations

import os
from itertools import islice
from typing import BinaryIO

from ..errors import ToolError
from .base import Tool, ToolContext, ToolResult, tool_from_function
from .paths import (
    BINARY_SAMPLE,
    count_lines,
    iter_lines,
    locate,
    looks_binary,
    path_subject,
    session_root,
)
from .reach import fence_of, open_readable
from .truncate import MAX_BYTES, MAX_LINE_CHARS, READ_PAGE, cut_line, format_bytes, utf8_len

DESCRIPTION = f"""Read a text file under the session's root, its lines numbered like `cat -n`. \
Lines over {MAX_LINE_CHARS:,} characters are cut; one call shows at most \
{format_bytes(MAX_BYTES)} and then says which offset to pass next. Binary files are refused; \
directories are for `list`. A cut tool result's saved output can be read at the absolute path \
its notice gives."""

# A line of MAX_LINE_CHARS characters takes at most 4 bytes a character in UTF-8.
_LINE_CAP = 4 * MAX_LINE_CHARS + 4


def read(path: str, offset: int = 0, limit: int = READ_PAGE, *, ctx: ToolContext) -> ToolResult:
    """Read a text file, a page of numbered lines at a time.

    path: File to read, relative to the root.
    offset: Lines to skip (0 = from line 1).
    limit: Lines to show.
    """
    root = session_root(ctx, "read")
    located = locate(root, path, must_exist=True, allow=(ctx.output_dir,))
    shown_path = located.shown
    if located.path.is_dir():
        raise ToolError(f"{shown_path} is a directory; use list to see what it holds.")
    # one descriptor, reached without following links and checked (a regular file the model
    # may read), for the sample, the count and the page
    with open_readable(fence_of(ctx), located) as f:
        return _page(f, shown_path, offset, limit)


def _page(f: BinaryIO, shown_path: str, offset: int, limit: int) -> ToolResult:
    if looks_binary(f.read(BINARY_SAMPLE)):
        raise ToolError(f"{shown_path} is a binary file ({format_bytes(os.fstat(f.fileno()).st_size)}); "
                        "read shows text only. Inspect it with python instead (pandas for data, PIL "
                        "for images).")
    f.seek(0)
    total = count_lines(f)
    meta = {"path": shown_path, "offset": offset, "total_lines": total}
    if total == 0:
        return ToolResult("(empty file)", title=shown_path, metadata={**meta, "lines": 0})
    if offset >= total:
        raise ToolError(f"offset={offset} is past the end of {shown_path}, which has {total:,} lines. "
                        f"Use an offset below {total}.")
    out: list[str] = []
    used = 0
    capped = False
    f.seek(0)
    lines = iter_lines(f, _LINE_CAP)
    for _ in islice(lines, offset):
        pass
    for number, (body, size) in enumerate(islice(lines, limit), start=offset + 1):
        text = cut_line(body.decode("utf-8", "replace").removesuffix("\r"),
                        size if size > len(body) else None)
        entry = f"{number:>6}\t{text}\n"
        n = utf8_len(entry)
        if out and used + n > MAX_BYTES:
            capped = True
            break
        out.append(entry)
        used += n
    last = offset + len(out)
    if last < total:
        why = f"Output capped at {format_bytes(MAX_BYTES)}: showing" if capped else "Showing"
        out.append(f"\n({why} lines {offset + 1:,}–{last:,} of {total:,}. "
                   f"Use offset={last} to read on.)")
    else:
        out.append(f"\n(End of file: {total:,} lines.)")
    return ToolResult("".join(out), title=shown_path,
                      metadata={**meta, "lines": last - offset, "more": last < total})


def read_tool() -> Tool:
    tool = tool_from_function(read, name="read", description=DESCRIPTION)
    tool.subject = path_subject(outputs=True)
    props = tool.parameters["properties"]
    props["offset"]["minimum"] = 0
    props["limit"]["minimum"] = 1
    return tool
