"""``history``: read back what compaction took out of the model's view (DESIGN §6).

Superseded messages are never deleted — the timeline keeps every body — so the agent can page
through them: a list with the first lines of each, or one message in full. A tool output that
prune replaced by a placeholder is read back by its part id.
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import NotFound, ToolError
from ..session.view import load_view
from .base import Tool, ToolContext, ToolResult
from .threads import run_in_tool_thread

PREVIEW = 300


def _summary(pos: int, m: Any) -> str:
    text = " ".join(p.text for p in m.parts if p.type == "text" and p.text)
    tools = ", ".join(f"{p.tool}({p.state})" for p in m.parts if p.type == "tool")
    line = f"#{pos} {m.role} {m.id}: {text[:PREVIEW]}{'…' if len(text) > PREVIEW else ''}"
    return line + (f" [tools: {tools}]" if tools else "")


def _full(m: Any) -> str:
    out = [f"{m.role} message {m.id} ({m.status})"]
    for p in m.parts:
        if p.type in ("text", "reasoning") and p.text:
            out.append(f"[{p.type}] {p.text}")
        elif p.type == "tool":
            out.append(f"[tool {p.tool} {p.state}] input: {json.dumps(p.input)}\n"
                       f"{p.output if p.state == 'completed' else p.error}")
    return "\n\n".join(out)


def _part(store: Any, session_id: str, part_id: str) -> str:
    try:
        part = store.get_part(part_id)
        store.position(session_id, part.message_id)  # a part of this session's timeline only
    except NotFound:
        raise ToolError(f"No part {part_id!r} in this session.") from None
    if part.type != "tool":
        return f"Part {part_id} is a {part.type} part:\n{getattr(part, 'text', '')}"
    body = part.output if part.state == "completed" else part.error
    return f"[tool {part.tool} {part.state}] input: {json.dumps(part.input)}\n{body or ''}"


def _read(store: Any, session_id: str, offset: int, limit: int, message_id: str | None,
          part_id: str | None = None) -> str:
    if part_id:
        return _part(store, session_id, part_id)
    _view, start = load_view(store, session_id)
    if message_id:
        try:
            position = store.position(session_id, message_id)
        except NotFound:
            raise ToolError(f"No message {message_id!r} in this session.") from None
        if position >= start:
            return f"Message {message_id} is still in your view (position {position})."
        return _full(store.get_message(message_id))
    if start == 0:
        return "Nothing was compacted yet: every message of this session is in your view."
    if offset >= start:
        return f"There are {start} superseded messages (positions 0–{start - 1}); offset {offset} is past them."
    page = store.timeline(session_id, cursor=str(offset), limit=min(limit, start - offset))
    lines = [_summary(offset + i, m) for i, m in enumerate(page.items)]
    end = offset + len(page.items)
    lines.append(f"(superseded messages {offset}–{end - 1} of {start}"
                 + (f"; next: offset={end})" if end < start else ")")
                 + " Pass message_id to read one in full.")
    return "\n".join(lines)


async def run_history(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    store = ctx.store
    if store is None:
        raise ToolError("history needs a Forge store")
    if ctx.run is not None:  # what this run wrote so far is readable
        await ctx.run.flush()
    text = await run_in_tool_thread(_read, store, ctx.session_id,
                                    int(args.get("offset", 0)), int(args.get("limit", 20)),
                                    args.get("message_id"), args.get("part_id"),
                                    name="history", stop=ctx.stop)
    return ToolResult(text, title="history")


def history_tool() -> Tool:
    return Tool(
        name="history",
        description=(
            "Page through this session's earlier messages that were compacted out of your view. "
            "Without arguments: the first 20, one line each; offset/limit page on; message_id "
            "reads one message in full; part_id reads back a tool output pruned from your view."
        ),
        parameters={
            "type": "object",
            "properties": {
                "offset": {"type": "integer", "minimum": 0, "default": 0},
                "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20},
                "message_id": {"type": "string"},
                "part_id": {"type": "string"},
            },
            "additionalProperties": False,
        },
        execute=run_history,
    )
