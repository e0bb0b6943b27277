"""Tool profiles: the whole builtin tool table, or a lean one for small context windows.

Against a local 8k-token model the system prompt and the tool table took over a third of the
window before the person said anything (issue 12). ``lean`` offers five builtins — python,
variables, sql, read, edit — each with a one-sentence description and no per-parameter prose
(the schema itself, and so what is validated, is unchanged), with a shorter system prompt
(system_prompt.py). Custom and plugin tools are offered as they are: someone registered them
on purpose. MCP servers' tools (``Tool.lazy``) stay, shortened the same way: the first sentence
of their description (at most ``LEAN_DESCRIPTION`` characters) and no per-parameter prose. ``auto`` (the default) is lean for a model whose input window litellm knows to be
at most ``SMALL_WINDOW`` tokens, else full; litellm knows nothing of a model behind a local
server's ``api_base``, so there ``tool_profile="lean"`` is set by hand.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Literal

from ..errors import InvalidOption
from .base import Tool

Profile = Literal["full", "lean"]
PROFILES = ("auto", "full", "lean")
SMALL_WINDOW = 16_384  # input tokens; at most this picks the lean profile under "auto"
LEAN_DESCRIPTION = 120  # characters of an MCP tool's description kept under lean

# One sentence each: what the tool does and the one fact a model gets wrong without it.
LEAN: dict[str, str] = {
    "python": "Run Python in the notebook's kernel, in the person's namespace (variables you "
              "define stay); returns printed output, the last expression's repr or the traceback.",
    "variables": "List the notebook's variables, or inspect one by `name` (a DataFrame's shape, "
                 "dtypes and head).",
    "sql": "Run one read-only DuckDB query: DataFrames are tables by variable name, files are "
           "read with read_csv('path') or read_parquet('path'); returns at most 100 rows.",
    "read": "Read a text file under the session's root, lines numbered; page with offset/limit.",
    "edit": "Replace `old_string` (exact, found once) with `new_string` in a file under the "
            "session's root; an empty old_string creates a new file.",
    # edit's counterpart for GPT-5-family models (registry.wants_apply_patch), trained on it
    "apply_patch": "Add, update (@@ hunks of ' ', '-', '+' lines), move or delete files under "
                   "the session's root with one '*** Begin Patch' … '*** End Patch' patch.",
    # offered only under the question flag (a live notebook view, or asked for)
    "question": "Ask the user one question (optional `options` to pick from) and wait for the "
                "answer; only when you cannot go on without them.",
}


def check_profile(value: object) -> str:
    """``value`` if it names a profile, else InvalidOption saying which ones exist."""
    if isinstance(value, str) and value.strip().lower() in PROFILES:
        return value.strip().lower()
    raise InvalidOption(
        f"tool_profile must be one of {', '.join(PROFILES)}, got {value!r}. 'lean' offers "
        "python, variables, sql, read and edit with short descriptions (for models with a small "
        "context window); 'auto' picks it for models litellm knows to have at most "
        f"{SMALL_WINDOW:,} input tokens (Forge.tool_profile / FORGE_TOOL_PROFILE).")


def profile_for(setting: str, model: str) -> Profile:
    """The profile a prompt to ``model`` uses under the setting ``auto | full | lean``."""
    if setting in ("full", "lean"):
        return setting  # type: ignore[return-value]
    from ..llm import context_window

    max_in, _ = context_window(model)
    return "lean" if max_in is not None and max_in <= SMALL_WINDOW else "full"


def _bare(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema without per-property descriptions (types, defaults and limits stay)."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return schema
    return {**schema, "properties": {
        name: {k: v for k, v in prop.items() if k != "description"} if isinstance(prop, dict)
        else prop for name, prop in properties.items()}}


def short_description(text: str) -> str:
    """The first sentence of ``text``, at most ``LEAN_DESCRIPTION`` characters."""
    flat = " ".join(text.split())
    cut = re.split(r"(?<=[.!?])\s", flat, maxsplit=1)[0]
    return cut if len(cut) <= LEAN_DESCRIPTION else cut[:LEAN_DESCRIPTION - 1].rstrip() + "…"


def apply_profile(table: dict[str, Tool], builtins: dict[str, Tool],
                  profile: Profile) -> dict[str, Tool]:
    """The turn's tool table under ``profile``: lean keeps the ``LEAN`` builtins in their short
    form, MCP tools shortened, and every other tool that is not a builtin (a custom tool of the
    same name included) as it is."""
    if profile == "full":
        return table
    out: dict[str, Tool] = {}
    for name, tool in table.items():
        if tool.lazy:
            out[name] = dataclasses.replace(tool, description=short_description(tool.description),
                                            parameters=_bare(tool.parameters))
        elif builtins.get(name) is not tool:
            out[name] = tool
        elif name in LEAN:
            out[name] = dataclasses.replace(tool, description=LEAN[name],
                                            parameters=_bare(tool.parameters))
    return out
