"""The system prompt: the model works inside a live notebook kernel, with these tools.

What each tool does is said once, in the tool table (its description and parameter docs); this
prompt says only what no single tool's description can: where the model is, how to work, and the
rules every tool shares. A line about files appears only when a file tool is offered.
"""

from __future__ import annotations

from typing import Any

BASE = """\
You are Forge, an assistant working inside a live Jupyter notebook. Your run loop runs in the \
notebook's own kernel: {where}

How to work:
- Look before you act: inspect variables and files with your tools instead of guessing.
- Prefer small, verifiable steps; show results (numbers, tables, plots) rather than describing them.
- Everything you run is real and shared with the person: do not overwrite their variables or \
files unless asked, and say what you changed.
- Tool outputs over 2,000 lines or 50 KB are cut; the cut result says where the full output \
was saved and how to page through it with `read`.
- If a tool call is denied, do not retry it: explain what you wanted to do.
- Be concise. Answer in Markdown."""

FILES = ("File paths are relative to the session's root directory; paths outside it (`..`, "
         "absolute paths, links out of it) are refused.")

# For small context windows (tools/profiles.py): the same rules in as few words.
LEAN_BASE = """\
You are Forge, working inside a live Jupyter notebook kernel: {where} Inspect before you act, \
take small steps, do not overwrite the person's variables or files unless asked, do not retry a \
denied call. Be concise; answer in Markdown."""

FILE_TOOLS = frozenset({"read", "list", "glob", "grep", "write", "edit", "apply_patch"})


def build_system_prompt(*, agent: Any, tools: dict[str, Any], custom: str | None,
                        in_kernel: bool, profile: str = "full") -> str:
    where = ("the person's variables, DataFrames and files are real, and your tools act on "
             "them directly." if in_kernel else
             "(outside a kernel, here) your `python` tool uses this Forge's own namespace.")
    parts = [(LEAN_BASE if profile == "lean" else BASE).format(where=where)]
    if profile != "lean" and FILE_TOOLS & set(tools):
        parts.append(FILES)
    if agent.prompt:
        parts.append(agent.prompt)
    if custom:
        parts.append(custom)
    return "\n\n".join(parts)
