"""Many MCP tools, offered lazily: the model searches them by words and loads what it needs.

Seven servers put 57 tools and ~33 KB of schema into every request (issue 29): most of a small
window, and paid again on each step. When the lazy tools of a turn's table (``Tool.lazy``: an
MCP server's) are estimated above ``Forge.tool_search_tokens``, they leave the table and one
``tool_search`` tool stands for them: its ``query`` lists the best matches by name and
description, its ``load`` puts the named tools in the table from the next step on — and in
that session's later turns (the loaded set lives as long as the kernel's Forge). Tokens are
estimated at ``CHARS_PER_TOKEN`` characters of a tool's JSON definition: deciding must not load
a tokenizer (litellm's counter loads ~110 MB of tables).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from ..errors import ToolError
from .base import Tool, ToolContext, ToolResult

TOOL_SEARCH = "tool_search"
CHARS_PER_TOKEN = 4
MAX_MATCHES = 8
MAX_LOAD = 20  # tools one call may load: the table must stay small
_WORD = re.compile(r"[a-z0-9]+")


def estimated_tokens(tools: Iterable[Tool]) -> int:
    """About how many tokens ``tools``' definitions take in a request."""
    chars = sum(len(json.dumps(t.definition(), separators=(",", ":"))) for t in tools)
    return chars // CHARS_PER_TOKEN


def lazy_tools(table: dict[str, Tool]) -> dict[str, Tool]:
    return {n: t for n, t in table.items() if t.lazy}


def offer_lazily(table: dict[str, Tool], budget: int, loaded: set[str]) -> dict[str, Tool]:
    """``table``, or — its lazy tools estimated over ``budget`` tokens (0: never) — the table
    without the lazy tools not in ``loaded``, plus ``tool_search`` to find and load them."""
    lazy = lazy_tools(table)
    if budget <= 0 or not lazy or TOOL_SEARCH in table or estimated_tokens(lazy.values()) <= budget:
        return table
    out = {n: t for n, t in table.items() if not t.lazy or n in loaded}
    out[TOOL_SEARCH] = search_tool(lazy, loaded)
    return out


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def _score(query: set[str], name: str, tool: Tool) -> int:
    named, described = _words(name.replace("_", " ")), _words(tool.description)
    score = 0
    for word in query:
        if word in named:
            score += 3
        elif word in described:
            score += 1
        elif len(word) > 3 and any(w.startswith(word) or word.startswith(w)
                                   for w in named if len(w) > 3):
            score += 1  # "issues" for create_issue, "commit" for list_commits
    return score


def _line(name: str, tool: Tool, loaded: set[str]) -> str:
    first = " ".join(tool.description.split())[:160]
    return f"- {name}{' (loaded)' if name in loaded else ''}: {first}"


def search_tool(lazy: dict[str, Tool], loaded: set[str]) -> Tool:
    """The ``tool_search`` tool standing for ``lazy``; ``load`` adds to ``loaded``."""
    servers = sorted({n.split("__", 1)[0] for n in lazy})

    async def execute(args: dict[str, object], ctx: ToolContext) -> ToolResult:
        query, load = str(args.get("query") or ""), args.get("load") or []
        if not query.strip() and not load:
            raise ToolError("Give query (words for what you need) or load (tool names).")
        names = [str(n) for n in load][:MAX_LOAD] if isinstance(load, list) else []
        unknown = [n for n in names if n not in lazy]
        fresh = [n for n in names if n in lazy and n not in loaded]
        loaded.update(n for n in names if n in lazy)
        run = ctx.run
        if run is not None and fresh:  # a new table: this step's own calls keep the old one
            run.tools = {**run.tools, **{n: lazy[n] for n in fresh}}
        out: list[str] = []
        if names:
            got = [n for n in names if n in lazy]
            out.append(f"Loaded {', '.join(got)}: call them from your next step on." if got else
                       "Nothing was loaded.")
        if unknown:
            out.append(f"No such tool: {', '.join(n[:64] for n in unknown)} (search for it "
                       "with query).")
        if query.strip():
            words = _words(query)
            ranked = sorted(((s, n) for n, t in lazy.items() if (s := _score(words, n, t)) > 0),
                            key=lambda x: (-x[0], x[1]))[:MAX_MATCHES]
            if ranked:
                out.append(f"Tools matching {query[:80]!r} (load the ones you need):")
                out += [_line(n, lazy[n], loaded) for _, n in ranked]
            else:
                out.append(f"No tool matches {query[:80]!r}; try other words. Servers: "
                           + ", ".join(servers) + ".")
        return ToolResult(output="\n".join(out), title=(query or ", ".join(names))[:80],
                          metadata={"loaded": sorted(loaded)})

    return Tool(
        name=TOOL_SEARCH,
        description=(f"Find and load tools of the MCP servers {', '.join(servers)}: "
                     f"{len(lazy)} tools are not in your tool list, to keep requests small. "
                     "`query`: words for what you need (lists the best matches); `load`: the "
                     "names of tools to add to your tool list (callable from your next step)."),
        parameters={"type": "object", "properties": {
            "query": {"type": "string"},
            "load": {"type": "array", "items": {"type": "string"}, "maxItems": MAX_LOAD}},
            "additionalProperties": False},
        execute=execute, subject_arg="query")
