"""How each setting that applies at the next prompt lands on a built Forge (``Forge.configure``).

Built and rebuilt alike: ``Forge(...)`` applies its resolved settings through this table, and a
notebook's ``%config`` reaches a live Forge through it too, so a declared setting cannot be
honoured in one path and forgotten in the other. The six memory settings are applied together
(one LongTermMemory); those that need a new store (``Setting.rebuilds``) are read at build time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from .errors import positive_number
from .memory import MEMORY_FLAG
from .tools.permission import Rule

if TYPE_CHECKING:
    from .forge import Forge

MEMORY_SETTINGS = ("memory_long_term", "memory_dir", "memory_embedding_model",
                    "memory_keyword_weight", "memory_vector_weight", "memory_half_life_days")


def _set(attr: str) -> Callable[[Forge, Any], None]:
    return lambda forge, value: setattr(forge, attr, value)


def _set_agent(forge: Forge, name: str) -> None:
    forge.agents.get(name)  # a clear error now, not at the first prompt
    forge.default_agent = name


def _set_api_base(forge: Forge, url: str | None) -> None:
    if url:
        forge.litellm_kwargs["api_base"] = url
    else:
        forge.litellm_kwargs.pop("api_base", None)


def _set_shell_timeout(forge: Forge, seconds: float) -> None:
    # session.shell / %forge shell: seconds a command the person runs may take
    forge.shell_timeout = positive_number(seconds, "shell_timeout", "Give the seconds a shell "
                                          "command may run (Forge.shell_timeout, default 60).")


def _set_flags(forge: Forge, flags: Iterable[str]) -> None:
    # the next prompt's tool table; memory keeps its own flag (set_memory)
    chosen = frozenset(f.strip().lower() for f in flags if f.strip())
    forge.flags = chosen | (forge.flags & {MEMORY_FLAG})


# How each setting that applies at the next prompt lands on a built Forge (Forge.configure);
# the memory settings are applied together, the ones that need a new store at build time.
APPLY: dict[str, Callable[[Forge, Any], None]] = {
    "model": _set("model"),
    "agent": _set_agent,
    "api_base": _set_api_base,
    "permissions": lambda forge, rules: setattr(forge, "permissions",
                                                [Rule.parse(r) for r in rules or ()]),
    "compaction_ratio": _set("compaction_ratio"),
    "char_budget": _set("char_budget"),
    "step_limit": _set("step_limit"),
    "tool_timeout": _set("tool_timeout"),
    "shell_timeout": _set_shell_timeout,
    "stream_timeout": _set("stream_timeout"),
    "max_tokens": _set("max_tokens"),
    "tool_profile": _set("tool_profile"),
    "mcp_servers": lambda forge, servers: forge.mcp.configure(servers),
    "flags": _set_flags,
}
