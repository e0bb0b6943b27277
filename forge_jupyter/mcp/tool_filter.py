"""Which of a server's tools are offered: an allow and a deny list, in the spellings people copy.

    "includeTools": [...]   "excludeTools": [...]    (Gemini CLI, VS Code-like configs)
    "enabled_tools": [...]  "disabled_tools": [...]  (Codex)
    "allowedTools": [...]   "disabledTools": [...]   (Claude-style)
    "tools": [...]                                   the tools to keep
    "tools": {"name": false, "*": false, "x": true}  opencode: the last entry naming a tool decides

An entry is the server's own tool name, or forge's ``server__tool`` for it, and may hold ``*``
and ``?`` (``"get_*"``). A tool is kept when an allow list (if any) names it and no deny list
does, then as the ``tools`` object says. An entry that names no tool the server lists is a
typo or a tool the server no longer has: it is reported, never silently ignored.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

ALLOW_KEYS = ("includeTools", "enabled_tools", "allowedTools", "allowed_tools")
DENY_KEYS = ("excludeTools", "disabled_tools", "disabledTools", "excludedTools")
MAX_ENTRIES = 1000


@dataclass(frozen=True)
class ToolFilter:
    allow: tuple[tuple[str, str], ...] | None = None  # (where it was written, pattern)
    deny: tuple[tuple[str, str], ...] = ()
    switches: tuple[tuple[str, bool], ...] = ()  # the ``tools`` object, in order

    def __bool__(self) -> bool:
        return self.allow is not None or bool(self.deny or self.switches)

    def keeps(self, server: str, tool: str) -> bool:
        if self.allow is not None and not any(_names(p, server, tool) for _, p in self.allow):
            return False
        if any(_names(p, server, tool) for _, p in self.deny):
            return False
        kept = True
        for pattern, on in self.switches:
            if _names(pattern, server, tool):
                kept = on
        return kept

    def unmatched(self, server: str, tools: list[str]) -> list[str]:
        """Each entry that names none of ``tools``, said with where it was written."""
        entries = [*(self.allow or ()), *self.deny, *(("tools", p) for p, _ in self.switches)]
        return [f"{key} names {pattern[:80]!r}, which the server does not offer"
                for key, pattern in entries
                if not any(_names(pattern, server, t) for t in tools)]


def _names(pattern: str, server: str, tool: str) -> bool:
    return fnmatchcase(tool, pattern) or fnmatchcase(f"{server}__{tool}", pattern)


def _list(value: Any, key: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{key} must be a list of tool names")
    if len(value) > MAX_ENTRIES:
        raise ValueError(f"{key} has over {MAX_ENTRIES} entries")
    return tuple((key, v) for v in value)


def parse_filter(entry: dict[str, Any]) -> ToolFilter:
    """The filter a server's configuration ``entry`` asks for; ValueError on a wrong shape."""
    allow: list[tuple[str, str]] | None = None
    deny: list[tuple[str, str]] = []
    for key in ALLOW_KEYS:
        if entry.get(key) is not None:
            allow = [*(allow or []), *_list(entry[key], key)]
    for key in DENY_KEYS:
        if entry.get(key) is not None:
            deny += _list(entry[key], key)
    switches: tuple[tuple[str, bool], ...] = ()
    tools = entry.get("tools")
    if isinstance(tools, list):
        allow = [*(allow or []), *_list(tools, "tools")]
    elif isinstance(tools, dict):
        if not all(isinstance(v, bool) for v in tools.values()) or len(tools) > MAX_ENTRIES:
            raise ValueError('tools must be a list of tool names or an object of '
                             '{"name": true | false}')
        switches = tuple((str(k), v) for k, v in tools.items())
    elif tools is not None:
        raise ValueError('tools must be a list of tool names or an object of {"name": true | false}')
    return ToolFilter(allow=None if allow is None else tuple(allow), deny=tuple(deny),
                      switches=switches)
