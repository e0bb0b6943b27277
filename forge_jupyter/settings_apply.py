"""How each setting that applies at the next prompt lands on a built Forge (``Forge.configure``).

Built and rebuilt alike: ``Forge(...)`` applies its resolved settings through this table, and a
notebook's ``%config`` reaches a live Forge through it too, so a declared setting cannot be
honoured in one path and forgotten in the other. The six memory settings are applied together
(one LongTermMemory); those that need a new store (``Setting.rebuilds``) are read at build time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from .errors import InvalidOption, positive_int, positive_number
from .memory import MEMORY_FLAG
from .model_choice import MAX_TOKENS_HINT
from .tools.permission import Rule
from .tools.profiles import check_profile

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


def _stream_timeout(value: float | None) -> float | None:
    return None if value is None else positive_number(
        value, "stream_timeout", "Give the seconds the model server may stay silent "
        "(Forge.stream_timeout / FORGE_STREAM_TIMEOUT, default 120), or None for "
        "litellm's own limit.")


def _max_tokens(value: int | None) -> int | None:
    return None if value is None else positive_int(value, "max_tokens", MAX_TOKENS_HINT)


def _max_age(value: Any) -> Any:  # timedelta | "30d" | None → timedelta | None
    from .retention import parse_max_age

    return parse_max_age(value)


def _token_count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidOption(f"tool_search_tokens must be a whole number of tokens, 0 or more, "
                            f"got {value!r} (0: MCP tools are always offered whole).")
    return value


def _set_tracing(forge: Forge, mode: str) -> None:
    # off and never on: OpenTelemetry is not imported, the bus untouched
    if forge.services.tracer is None and mode == "off":
        forge.tracing = "off"
        return
    from .tracing import switch

    forge.services.tracer = switch(forge.services.tracer, forge.bus, mode)
    forge.tracing = mode


def _image_limit(name: str) -> Callable[[Forge, Any], None]:
    # what a vision model is sent of the tools' images (llm/images.py): a count or a size, > 0
    return lambda forge, value: setattr(forge, name, positive_int(
        value, name, f"Give a whole number above 0 (Forge.{name} / FORGE_{name.upper()})."))


# The Forge attributes checked on every assignment: (check giving the value kept, docstring).
CHECKED: dict[str, tuple[Callable[[Any], Any], str]] = {
    "stream_timeout": (_stream_timeout, "Seconds the model server may send nothing — before "
                       "its first byte or in the middle of an answer — before the request fails "
                       "(and is retried like a dropped connection). None: litellm's own request "
                       "timeout (600 s)."),
    "max_tokens": (_max_tokens, "The most tokens one model step may generate (litellm's "
                   "``max_tokens``); None: the model server's own default. A step cut off there "
                   "ends the run, marked as such."),
    "tool_profile": (check_profile, "auto | full | lean: which tool table and system prompt a "
                     "prompt gets (tools/profiles.py); auto is lean for models with a small "
                     "context window."),
    "max_age": (_max_age, "Sessions idle longer than this (a datetime.timedelta) are deleted by "
                "``cleanup()`` — and when the Forge starts, if set (``cleanup_at_startup``). "
                "None (the default): nothing is deleted."),
}


def checked_setting(name: str) -> Any:
    """The Forge property ``name``: every assignment goes through its check (``CHECKED``)."""
    check, doc = CHECKED[name]
    kept = "_" + name

    def get(forge: Forge) -> Any:
        return forge.__dict__.get(kept)

    def put(forge: Forge, value: Any) -> None:
        forge.__dict__[kept] = check(value)

    return property(get, put, doc=doc)


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
    "lean_stream": lambda forge, value: setattr(forge, "lean_stream", bool(value)),
    "max_tokens": _set("max_tokens"),
    "tool_profile": _set("tool_profile"),
    "tool_search_tokens": lambda forge, value: setattr(forge, "tool_search_tokens",
                                                       _token_count(value)),
    "mcp_servers": lambda forge, servers: forge.mcp.configure(servers),
    "flags": _set_flags,
    "tracing": _set_tracing,
    **{name: _image_limit(name) for name in ("image_max_side", "image_max_bytes",
                                             "images_per_step", "images_per_request")},
}
