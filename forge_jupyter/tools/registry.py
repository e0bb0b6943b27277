"""The tool registry: builtin and custom tools, and the table one turn may use."""

from __future__ import annotations

from .base import Tool


class ToolRegistry:
    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}

    def register(self, tool: Tool, *, replace: bool = True) -> Tool:
        if not replace and tool.name in self._tools:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        self._tools[tool.name] = tool
        return tool

    def unregister(self, name: str) -> None:
        self._tools.pop(name, None)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return sorted(self._tools)

    def resolve(self, *, disabled: set[str] | frozenset[str] = frozenset()) -> dict[str, Tool]:
        """This turn's tool table: every registered tool not disabled for the turn."""
        return {n: t for n, t in sorted(self._tools.items()) if n not in disabled}
