"""Configuration the Jupyter way: a traitlets Configurable named ``Forge``.

    %config Forge.model = "anthropic/claude-sonnet-4-5"      # in a notebook
    c.Forge.db = "~/work/forge.duckdb"                       # in ipython_config.py
    FORGE_MODEL=openai/gpt-4o-mini jupyter lab               # from the environment

Precedence: a value set in config (``%config``, ``ipython_config.py``) wins over a ``FORGE_*``
environment variable, which wins over the default. ``%forge config`` shows every value and
where it came from. API keys are never configured here: litellm reads them from its own
environment variables (OPENAI_API_KEY, …) and they are never written to the store.
"""

from __future__ import annotations

import os
from typing import Any

from traitlets import (
    Bool,
    CaselessStrEnum,
    Dict,
    Float,
    Int,
    List,
    TraitError,
    Unicode,
    Union,
    observe,
    validate,
)
from traitlets.config import Configurable

ENV = {
    "model": "FORGE_MODEL",
    "db": "FORGE_DB",
    "tenant": "FORGE_TENANT",
    "agent": "FORGE_AGENT",
    "api_base": "FORGE_API_BASE",
    "permissions": "FORGE_PERMISSIONS",
    "compaction_ratio": "FORGE_COMPACTION_RATIO",
    "char_budget": "FORGE_CHAR_BUDGET",
    "step_limit": "FORGE_STEP_LIMIT",
    "tool_timeout": "FORGE_TOOL_TIMEOUT",
    "shell_timeout": "FORGE_SHELL_TIMEOUT",
    "stream_timeout": "FORGE_STREAM_TIMEOUT",
    "max_tokens": "FORGE_MAX_TOKENS",
    "tool_profile": "FORGE_TOOL_PROFILE",
    "widget_throttle": "FORGE_WIDGET_THROTTLE",
    "widget": "FORGE_WIDGET",
    "builtin_tools": "FORGE_BUILTIN_TOOLS",
    "max_age": "FORGE_MAX_AGE",
    "session_max_age": "FORGE_SESSION_MAX_AGE",
    "mcp_servers": "FORGE_MCP_SERVERS",
    "memory_long_term": "FORGE_MEMORY_LONG_TERM",
    "memory_dir": "FORGE_MEMORY_DIR",
    "memory_embedding_model": "FORGE_MEMORY_EMBEDDING_MODEL",
    "memory_keyword_weight": "FORGE_MEMORY_KEYWORD_WEIGHT",
    "memory_vector_weight": "FORGE_MEMORY_VECTOR_WEIGHT",
    "memory_half_life_days": "FORGE_MEMORY_HALF_LIFE_DAYS",
    "replay": "FORGE_REPLAY",
    "flags": "FORGE_FLAGS",
}


class Forge(Configurable):
    """forge-jupyter settings for this kernel (the Python facade is ``forge_jupyter.Forge``)."""

    model = Unicode(None, allow_none=True, help="litellm model string, e.g. openai/gpt-4o-mini. "
                    "Unset: the first provider key found, a local Ollama, else the offline demo model.").tag(config=True)
    db = Unicode("", help="DuckDB file of the history (default ~/.forge/forge.duckdb), or a "
                 "postgresql:// URL of a team's database.").tag(config=True)
    tenant = Unicode("default", help="Tenant id every row is written under (on PostgreSQL "
                     "under JupyterHub, left at default: the hub's user).").tag(config=True)
    agent = Unicode("build", help="Default agent: build (asks before mutating tools) or plan (read-only).").tag(config=True)
    api_base = Unicode(None, allow_none=True, help="Base URL of an OpenAI-compatible server.").tag(config=True)
    permissions = List(Unicode(), help='Permission rules "tool:pattern=action", e.g. "write:data/*=allow".').tag(config=True)
    compaction_ratio = Float(0.8, help="Compact when the context passes this share of the usable window.").tag(config=True)
    char_budget = Int(400_000, help="Context budget in characters for models litellm does not know.").tag(config=True)
    step_limit = Int(25, help="Model steps one prompt may take.").tag(config=True)
    tool_timeout = Float(300.0, help="Seconds a tool call may run.").tag(config=True)
    shell_timeout = Float(60.0, help="Seconds a command run with %forge shell (session.shell) "
                          "may take before its process group is killed.").tag(config=True)
    stream_timeout = Float(120.0, help="Seconds the model server may send nothing (before its "
                           "first byte or mid-answer) before the request is retried, then "
                           "given up with an error.").tag(config=True)
    max_tokens = Int(0, help="Most tokens one model step may generate (a reply cut off there "
                     "ends the run, marked as such); 0: the model server's default.").tag(config=True)
    tool_profile = Unicode("auto", help="auto | full | lean: lean offers python, variables, sql, "
                           "read and edit with short descriptions and a shorter system prompt, "
                           "for small context windows; auto picks it for models litellm knows "
                           "to have at most 16k input tokens.").tag(config=True)
    widget_throttle = Float(30.0, help="Most widget updates per second.").tag(config=True)
    widget = Unicode("auto", help="auto | off: 'off' renders turns as plain streamed text.").tag(config=True)
    builtin_tools = Bool(True, help="Offer the builtin notebook tools (python, variables, sql, files…).").tag(config=True)
    max_age = Unicode("", help='Delete sessions idle longer than this ("30d", "12h") when the store '
                      "opens; empty (the default) keeps everything.").tag(config=True)
    session_max_age = Union([Unicode(), Float()], default_value="30m", help=(
        'A notebook\'s current session idle longer than this ("30m", "1h"; a number: seconds) '
        "whose last tool calls all failed is set aside: the next %%forge starts a fresh one and "
        "says so (session/poisoned.py). 0 turns it off.")).tag(config=True)
    memory_long_term = Bool(True, help="Long-term memory: the memory_search/memory_get tools, "
                            "and compaction's daily logs in Forge.memory_dir.").tag(config=True)
    memory_dir = Unicode("", help="Long-term memory folder (MEMORY.md, daily logs); empty: "
                         ".forge/memory beside the notebook. A relative path is taken from the "
                         "notebook's folder.").tag(config=True)
    memory_embedding_model = Unicode("", help="litellm embedding model for memory search's "
                                     "vectors (e.g. openai/text-embedding-3-small); empty: found "
                                     "from the provider keys; 'none': keyword-only.").tag(config=True)
    memory_keyword_weight = Float(0.3, help="Weight of the BM25 keyword score in memory search.").tag(config=True)
    memory_vector_weight = Float(0.7, help="Weight of vector similarity in memory search.").tag(config=True)
    memory_half_life_days = Float(7.0, help="Days after which a daily log's matches count half "
                                  "(0: no decay).").tag(config=True)
    # The same default in JupyterLab and headless (nbconvert, CI): replay needs the same cell,
    # the same prompt text and the same history before it, which an interactive re-run of a
    # cell does not have (its history has grown) — so in practice it replays after a restart,
    # where a person wants the recorded answer too; a fresh one is `%%forge --live` away.
    replay = CaselessStrEnum(
        ["auto", "off", "strict"], "auto",
        help="auto: a %%forge cell whose turn was recorded (same notebook, cell, prompt and "
             "history before it) is replayed, no model call; a re-run tool that gives another "
             "result hands over to the model from there. strict: every %%forge cell must "
             "replay, and any difference fails the cell (CI without a key). off: always ask "
             "the model.").tag(config=True)

    flags = List(Unicode(), help='Optional tool sets to turn on, e.g. ["search"]: webfetch and '
                 "the provider's own web search where litellm says the model has it "
                 "(FORGE_FLAGS=search); \"question\": the question tool also where no live "
                 "widget or side panel shows the turn (it is on where one does).").tag(config=True)
    mcp_servers = Dict(help='MCP servers as in Claude Desktop\'s mcpServers: {"name": {"command": '
                       '"npx", "args": [...], "env": {...}} or {"url": "https://…"}}; merged over '
                       "~/.forge/mcp.json and the notebook folder's .forge/mcp.json.").tag(config=True)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._sources: dict[str, str] = {}
        configured = set(self.config.get("Forge", {}))
        for name, var in ENV.items():
            if name in configured:
                self._sources[name] = "config"
            elif var in os.environ:
                self._set_from_env(name, os.environ[var])
                self._sources[name] = f"env {var}"
            else:
                self._sources[name] = "default"
        self._ready = True

    def _set_from_env(self, name: str, raw: str) -> None:
        trait = self.traits()[name]
        value: Any = raw
        if isinstance(trait, Dict):  # JSON, as in the mcp.json files
            import json

            value = json.loads(raw)
        elif isinstance(trait, List):
            value = [r.strip() for r in raw.split(",") if r.strip()]
        elif isinstance(trait, Bool):
            value = raw.strip().lower() not in ("0", "false", "no", "off", "")
        elif isinstance(trait, Int):
            value = int(raw)
        elif isinstance(trait, Float):
            value = float(raw)
        self.set_trait(name, value)

    @validate("permissions")
    def _valid_permissions(self, proposal: Any) -> Any:
        from .tools.permission import Rule

        try:  # refused as it is set (%config, FORGE_PERMISSIONS), not at the next prompt
            for rule in proposal["value"]:
                Rule.parse(rule)
        except (TypeError, ValueError) as exc:
            raise TraitError(str(exc)) from None
        return proposal["value"]

    @validate("session_max_age")
    def _valid_session_max_age(self, proposal: Any) -> Any:
        from .session.poisoned import session_max_age

        try:
            session_max_age(proposal["value"])
        except ValueError as exc:
            raise TraitError(str(exc)) from None
        return proposal["value"]

    @observe(*ENV)
    def _changed(self, change: Any) -> None:
        if getattr(self, "_ready", False):
            self._sources[change["name"]] = "config"

    def effective(self) -> list[tuple[str, Any, str]]:
        """(setting, value, where it came from) for ``%forge config``."""
        return [(name, getattr(self, name), self._sources.get(name, "default")) for name in ENV]

    def memory_kwargs(self) -> dict[str, Any]:
        """The long-term memory settings, as ``Forge(...)`` takes them."""
        return {"memory_long_term": self.memory_long_term,
                "memory_dir": self.memory_dir or None,
                "memory_embedding_model": self.memory_embedding_model or None,
                "memory_keyword_weight": self.memory_keyword_weight,
                "memory_vector_weight": self.memory_vector_weight,
                "memory_half_life_days": self.memory_half_life_days}

    def forge_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``forge_jupyter.Forge`` built from these settings."""
        kwargs: dict[str, Any] = {
            "db": self.db or None,
            "model": self.model or None,
            "tenant": self.tenant,
            "agent": self.agent,
            "permissions": list(self.permissions),
            "compaction_ratio": self.compaction_ratio,
            "char_budget": self.char_budget,
            "step_limit": self.step_limit,
            "tool_timeout": self.tool_timeout,
            "shell_timeout": self.shell_timeout,
            "stream_timeout": self.stream_timeout,
            "max_tokens": self.max_tokens or None,
            "tool_profile": self.tool_profile,
            "builtin_tools": self.builtin_tools,
            "max_age": self.max_age or None,
            "mcp_servers": dict(self.mcp_servers) or None,
            "flags": [f.strip().lower() for f in self.flags if f.strip()],
            **self.memory_kwargs(),
        }
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if os.environ.get("FORGE_API_KEY"):  # for a key-less local server; read, never stored
            kwargs["api_key"] = os.environ["FORGE_API_KEY"]
        return kwargs
