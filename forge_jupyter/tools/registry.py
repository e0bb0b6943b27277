"""The tool registry: builtin and custom tools, and the ones that make sense for a model."""

from __future__ import annotations

import re
from collections.abc import Iterable

from .base import Tool

# GPT-5 and later, and codex models, are trained on the V4A patch format: they get apply_patch
# instead of edit and write. Judged on the litellm model string, any provider prefix
# ("openai/", "azure/", "openrouter/openai/") and case aside: a "gpt-N" name with N >= 5 (a
# fine-tune "ft:gpt-5-mini:…" too), or "codex" as a word of the model's own name.
_GPT = re.compile(r"^(?:ft:)?gpt-(\d+)(?![\w])")
_CODEX = re.compile(r"(?:^|[-_.:])codex(?:$|[-_.:])")


def wants_apply_patch(model: str | None) -> bool:
    """Whether ``model`` edits files with apply_patch (else edit and write)."""
    name = (model or "").strip().lower().rsplit("/", 1)[-1]
    gpt = _GPT.match(name)
    return bool(gpt and int(gpt.group(1)) >= 5) or bool(_CODEX.search(name))


def model_capabilities(model: str) -> frozenset[str]:
    """What litellm's model table says the model can do (vision, …); empty when unknown."""
    from .. import llm

    lm = llm.litellm()
    found = set()
    for capability, check in (("vision", "supports_vision"), ("pdf", "supports_pdf_input"),
                              ("reasoning", "supports_reasoning")):
        try:
            if getattr(lm, check)(model=model):
                found.add(capability)
        except Exception:  # an unknown model: assume nothing
            continue
    return frozenset(found)


class ToolRegistry:
    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}

    def register(self, tool: Tool, *, replace: bool = True) -> Tool:
        if not replace and tool.name in self._tools:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        self._tools[tool.name] = tool
        return tool

    def unregister(self, name: str) -> Tool | None:
        """Take ``name`` out of the registry (an MCP server's tool when the server is down)."""
        return self._tools.pop(name, None)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return sorted(self._tools)

    def all(self) -> list[Tool]:
        return [self._tools[n] for n in sorted(self._tools)]

    def resolve(self, *, model: str | None = None, flags: Iterable[str] = ()) -> dict[str, Tool]:
        """The tools that make sense for ``model`` under ``flags``, independent of any session:
        a tool needing a capability the model lacks, or a flag that is off, is not offered."""
        flags = frozenset(flags)
        capabilities: frozenset[str] | None = None
        table: dict[str, Tool] = {}
        for name in sorted(self._tools):
            tool = self._tools[name]
            if tool.flag is not None and tool.flag not in flags:
                continue
            if tool.models is not None and not tool.models(model or ""):
                continue  # apply_patch for GPT-5-family models, edit and write for the others
            if tool.requires:
                if capabilities is None:
                    capabilities = model_capabilities(model) if model else frozenset()
                if not tool.requires <= capabilities:
                    continue
            table[name] = tool
        return table
