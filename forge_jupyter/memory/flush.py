"""What a compaction summarized away, as a daily-log entry: requests, decisions, tool results.

The summary keeps the gist for the session; the log keeps the details for later sessions to
find (``memory_search``). Each tool result is tagged with its tool (``[tool:sql]``); results
of research-style tools — the ones that read data and files — keep a longer extract and are
tagged ``[research]`` too, as their numbers and findings are what later work looks for.
Results of the memory tools themselves are left out (they came from the memory already);
a session's earlier summaries are too (what they summarized was logged at the time).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Sequence

from ..message import CompactionPart, Message, TextPart, ToolPart

RESEARCH_TOOLS = frozenset({"sql", "variables", "read", "grep", "glob", "list", "history"})
NOT_LOGGED = frozenset({"memory_search", "memory_get"})
TOOL_EXTRACT = 2_000
RESEARCH_EXTRACT = 5_000
ERROR_EXTRACT = 500
TEXT_EXTRACT = 1_500
ASK_EXTRACT = 500
_INPUT_KEYS = ("query", "code", "path", "pattern", "name", "prompt")


def _cut(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit].rstrip() + f"\n… [{len(text) - limit:,} more characters]"


def _fence(text: str) -> str:
    """``text`` in a code fence longer than any run of backticks inside it."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text}\n{fence}"


def _call_line(part: ToolPart) -> str:
    for key in _INPUT_KEYS:
        value = part.input.get(key)
        if isinstance(value, str) and value.strip():
            break
    else:
        value = json.dumps(part.input, ensure_ascii=False)
    line = " ".join(str(value).split())
    return line if len(line) <= 200 else line[:200] + "…"


def _texts(m: Message) -> str:
    return "\n".join(p.text for p in m.parts if isinstance(p, TextPart) and p.text and not p.synthetic)


def tool_entry(part: ToolPart) -> str | None:
    if part.tool in NOT_LOGGED or part.state not in ("completed", "error"):
        return None
    research = part.tool in RESEARCH_TOOLS
    tag = ("[research]" if research else "") + f"[tool:{part.tool}]"
    if part.state == "error":
        body = _cut(part.error or "", ERROR_EXTRACT)
        tag += "[error]"
    else:
        body = _cut(part.output or "", RESEARCH_EXTRACT if research else TOOL_EXTRACT)
    return f"### {tag} {_call_line(part)}\n\n{_fence(body) if body else '(no output)'}\n"


def log_entry(messages: Sequence[Message], *, session: str, at: dt.datetime) -> str | None:
    """The daily-log entry for the messages a compaction summarized; None if nothing to keep."""
    out: list[str] = []
    for m in messages:
        if m.summary or any(isinstance(p, CompactionPart) for p in m.parts):
            continue
        text = _texts(m)
        if m.role == "user" and text:
            quoted = "\n".join(f"> {line}" for line in _cut(text, ASK_EXTRACT).splitlines())
            out.append(f"### Asked\n\n{quoted}\n")
        elif m.role == "assistant":
            for part in m.parts:
                if isinstance(part, ToolPart) and (entry := tool_entry(part)):
                    out.append(entry)
            if text:
                out.append(f"### Decided\n\n{_cut(text, TEXT_EXTRACT)}\n")
    if not out:
        return None
    head = f"## {at:%H:%M} · session {session} · compacted\n"
    return "\n".join([head, *out]) + "\n"
