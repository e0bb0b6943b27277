"""The agent's tools over long-term memory: ``memory_search`` and ``memory_get``.

Both only read, so the ``build`` and ``plan`` agents allow them by default; permission rules
match the query (``memory_search:*salary*=deny``) and the path relative to the memory folder,
normalized as the file tools' paths are (``memory_get:private/*=deny``). ``memory_get`` never leaves the memory folder (``..``, absolute paths and
symbolic links are refused as the file tools refuse them). Outputs are truncated and scrubbed
like every tool's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import ToolError
from ..tools.base import Tool, ToolContext, ToolResult, tool_from_function
from ..tools.paths import ignores_case, locate
from ..tools.permission import PathSubject
from ..tools.truncate import cut_line
from .search import MAX_RESULTS
from .service import MAX_QUERY_CHARS

GET_LINES = 200  # lines one memory_get call returns at most
MEMORY_FLAG = "long_term_memory"  # the Forge sets it while memory is on (Forge.set_memory)

# Short: the two tools are in every full tool table (tests/core/test_tool_profile.py caps it)
SEARCH_DESCRIPTION = ("Search long-term memory (facts, earlier sessions' results and decisions) "
                      "for prior work: snippets with file:lines.")
GET_DESCRIPTION = "Read lines of a memory file memory_search named."


def _memory(ctx: ToolContext) -> Any:
    memory = ctx.memory
    if memory is None:
        raise ToolError("Long-term memory is off for this Forge (Forge.memory_long_term).")
    return memory


def memory_search(query: str, k: int = 5, *, ctx: ToolContext) -> ToolResult:
    """Search long-term memory."""
    try:
        result = _memory(ctx).search(query, k)
    except ValueError as exc:
        raise ToolError(str(exc)) from None
    if result.mode == "hybrid":
        w = _memory(ctx).weights
        head = (f"Hybrid search (keyword {w.keyword:g}, vector {w.vector:g}, half-life "
                f"{w.half_life_days:g} days).")
    else:
        head = "Keyword-only search" + (f": {result.note}." if result.note else ".")
    if not result.hits:
        return ToolResult(f"{head}\nNothing in long-term memory matches {query!r}.",
                          title=f"memory: {query[:60]}",
                          metadata={"mode": result.mode, "note": result.note, "hits": 0})
    blocks = [head]
    for i, h in enumerate(result.hits, start=1):
        lines = f"{h.start_line}" if h.start_line == h.end_line else f"{h.start_line}-{h.end_line}"
        blocks.append(f"[{i}] {h.path}:{lines} (score {h.score:.3f})\n{h.snippet}")
    return ToolResult("\n\n".join(blocks), title=f"memory: {query[:60]}",
                      metadata={"mode": result.mode, "note": result.note, "hits": len(result.hits),
                                "files": sorted({h.path for h in result.hits})})


def memory_get(path: str, start_line: int = 1, end_line: int = 0, *,
               ctx: ToolContext) -> ToolResult:
    """Read lines of a memory file (end_line 0: 200 lines)."""
    text = _memory(ctx).read(path)
    lines = text.splitlines()
    last = min(end_line or start_line + GET_LINES - 1, start_line + GET_LINES - 1, len(lines))
    if end_line and end_line < start_line:
        raise ToolError(f"end_line={end_line} comes before start_line={start_line}.")
    if not lines:
        return ToolResult("(empty file)", title=path, metadata={"path": path, "total_lines": 0})
    if start_line > len(lines):
        raise ToolError(f"start_line={start_line} is past the end of {path}, which has "
                        f"{len(lines):,} lines.")
    shown = [f"{n:>6}\t{cut_line(lines[n - 1])}" for n in range(start_line, last + 1)]
    footer = (f"\n(Lines {start_line:,}–{last:,} of {len(lines):,}; start_line={last + 1} reads on.)"
              if last < len(lines) else f"\n(End of file: {len(lines):,} lines.)")
    return ToolResult("\n".join(shown) + footer, title=path,
                      metadata={"path": path, "start_line": start_line, "end_line": last,
                                "total_lines": len(lines)})


def _file_subject(memory_of: Callable[[], Any]) -> Callable[..., PathSubject]:
    """memory_get's permission subject: its path normalized inside the memory folder
    (``../memory/private/x.md`` is ``private/x.md``), so a rule cannot be walked around by
    spelling; a path that leaves the folder is refused (ToolError) before any rule is read."""

    def subject(args: dict[str, Any], root: str | None, output_dir: str | None = None) -> PathSubject:
        folder = str(memory_of().path)
        found = locate(folder, args.get("path", "."))
        return PathSubject(found.shown, folder, ignores_case(folder))

    return subject


def memory_tools(memory_of: Callable[[], Any]) -> list[Tool]:
    """The two tools; ``memory_of()``: the Forge's LongTermMemory now (it may be reset)."""
    search = tool_from_function(memory_search, name="memory_search", description=SEARCH_DESCRIPTION)
    search.subject_arg = "query"
    props = search.parameters["properties"]
    props["k"].update(minimum=1, maximum=MAX_RESULTS)
    props["query"].update(minLength=1, maxLength=MAX_QUERY_CHARS)
    get = tool_from_function(memory_get, name="memory_get", description=GET_DESCRIPTION)
    get.subject = _file_subject(memory_of)
    props = get.parameters["properties"]
    props["start_line"]["minimum"] = 1
    props["end_line"]["minimum"] = 0
    search.flag = get.flag = MEMORY_FLAG
    return [search, get]
