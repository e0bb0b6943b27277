"""Every setting of forge-jupyter, declared once: name, type, default, variable, help.

The traitlets class ``forge_jupyter.config.Forge`` (``%config Forge.NAME``), the Python API's
defaults (``forge_jupyter.Forge(...)`` in a script or a kernel), ``%forge config`` and the docs'
settings reference (``scripts/gen_settings_docs.py``) are all derived from ``SETTINGS``.

Precedence, the same in a kernel and in a script: an explicit argument > config (``%config``,
``ipython_config.py``) > the ``FORGE_*`` variable > the default here.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

Kind = Literal["str", "int", "float", "bool", "list", "dict", "enum", "duration"]
# Where a setting is read: by the Forge (the Python API and the notebook alike), or only by the
# notebook's controller and widget (no Forge argument).
Scope = Literal["forge", "notebook"]

_FALSE = ("0", "false", "no", "off", "")


class _Unset:
    """A Forge argument nobody passed: the config, the variable or the default decides."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()


@dataclass(frozen=True)
class Setting:
    name: str
    kind: Kind
    default: Any
    help: str
    scope: Scope = "forge"
    choices: tuple[str, ...] = ()
    # The config and variable spell "nothing" as this value ("" or 0); the Python API as None.
    empty: Any = None
    # A change needs a new store (a new Forge) rather than applying at the next prompt.
    rebuilds: bool = False

    @property
    def env(self) -> str:
        return "FORGE_" + self.name.upper()

    def parse(self, raw: str) -> Any:
        """The value a ``FORGE_*`` variable's text stands for (a clear error when it cannot)."""
        try:
            if self.kind == "dict":
                value = json.loads(raw)
                if not isinstance(value, dict):
                    raise ValueError("expected a JSON object")
                return value
            if self.kind == "list":
                return [r.strip() for r in raw.split(",") if r.strip()]
            if self.kind == "bool":
                return raw.strip().lower() not in _FALSE
            if self.kind == "int":
                return int(raw)
            if self.kind == "float":
                return float(raw)
            if self.kind == "duration":  # "30m", "1h" or seconds
                try:
                    return float(raw)
                except ValueError:
                    return raw.strip()
            if self.kind == "enum" and raw.strip().lower() not in self.choices:
                raise ValueError(f"expected one of {', '.join(self.choices)}")
        except ValueError as exc:
            raise ValueError(f"{self.env}={raw!r} is not a valid {self.kind} ({exc}); "
                             f"unset it or give {self.help_line()}") from None
        return raw.strip().lower() if self.kind == "enum" else raw

    def to_api(self, value: Any) -> Any:
        """The config's spelling of a value → the Python API's (``""``/``0`` → ``None``)."""
        if self.empty is not None and value == self.empty:
            return None
        return value

    def help_line(self) -> str:
        return self.help.split(". ")[0].rstrip(".")


SETTINGS: tuple[Setting, ...] = (
    Setting("model", "str", None, "litellm model string, e.g. openai/gpt-4o-mini. Unset: the "
            "first provider key found, a local Ollama, else the offline demo model.", empty=""),
    Setting("db", "str", "", "DuckDB file of the history (default ~/.forge/forge.duckdb), or a "
            "postgresql:// URL of a team's database.", empty="", rebuilds=True),
    Setting("tenant", "str", "default", "Tenant id every row is written under (on PostgreSQL "
            "under JupyterHub, left at default: the hub's user).", rebuilds=True),
    Setting("agent", "str", "build", "Default agent: build (asks before mutating tools) or plan "
            "(read-only)."),
    Setting("api_base", "str", None, "Base URL of an OpenAI-compatible server.", empty=""),
    Setting("permissions", "list", [], 'Permission rules "tool:pattern=action", e.g. '
            '"write:data/*=allow".'),
    Setting("compaction_ratio", "float", 0.8, "Compact when the context passes this share of the "
            "usable window."),
    Setting("char_budget", "int", 400_000, "Context budget in characters for models litellm "
            "does not know."),
    Setting("step_limit", "int", 25, "Model steps one prompt may take, its subagents' "
            "(task) included."),
    Setting("tool_timeout", "float", 300.0, "Seconds a tool call may run."),
    Setting("shell_timeout", "float", 60.0, "Seconds a command run with %forge shell "
            "(session.shell) may take before its process group is killed."),
    Setting("stream_timeout", "float", 120.0, "Seconds the model server may send nothing (before "
            "its first byte or mid-answer) before the request is retried, then given up with an "
            "error."),
    Setting("lean_stream", "bool", True, "Read an openai/ model's answer straight from its "
            "SSE instead of building the openai SDK's and litellm's objects per chunk: litellm "
            "still makes the request and raises every error; the events, usage and cost are "
            "the same, at about a tenth of the CPU per streamed turn (docs/benchmarks.md). Other "
            "routes, and any litellm callback configured, keep litellm's reading; off, every "
            "stream is litellm's."),
    Setting("max_tokens", "int", 0, "Most tokens one model step may generate (a reply cut off "
            "there ends the run, marked as such; a server that streams on past it is stopped by "
            "forge); 0: the model server's default.", empty=0),
    Setting("tool_profile", "enum", "auto", "auto | full | lean: lean offers python, variables, "
            "sql, read and edit with short descriptions and a shorter system prompt, for small "
            "context windows; auto picks it for models litellm knows to have at most 16k input "
            "tokens.", choices=("auto", "full", "lean")),
    Setting("tool_search_tokens", "int", 4000, "When the MCP servers' tools take more tokens "
            "than this in a request (estimated), the model gets them lazily: a tool_search tool "
            "finds them by words and loads the ones it needs; 0 always offers them whole."),
    Setting("tracing", "enum", "off", "off | otlp | global: OpenTelemetry spans of every turn, "
            "model call and tool call after the GenAI conventions (docs/tracing.md). otlp exports "
            "over OTLP/HTTP where the standard OTEL_EXPORTER_OTLP_* variables say; global hands "
            "them to the process's own tracer provider. Needs forge-jupyter[otel]; message "
            "content only with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true.",
            choices=("off", "otlp", "global")),
    Setting("widget_throttle", "float", 30.0, "Most widget updates per second.",
            scope="notebook"),
    Setting("widget", "enum", "auto", "auto | off: 'off' renders turns as plain streamed text.",
            scope="notebook", choices=("auto", "off")),
    Setting("builtin_tools", "bool", True, "Offer the builtin notebook tools (python, variables, "
            "sql, files…).", rebuilds=True),
    Setting("max_age", "str", "", 'Delete sessions idle longer than this ("30d", "12h") when the '
            "store opens; empty (the default) keeps everything.", empty="", rebuilds=True),
    Setting("session_max_age", "duration", "30m", 'A notebook\'s current session idle longer '
            'than this ("30m", "1h"; a number: seconds) whose last tool calls all failed is set '
            "aside: the next %%forge starts a fresh one and says so (session/poisoned.py). 0 "
            "turns it off.", scope="notebook"),
    Setting("mcp_servers", "dict", {}, 'MCP servers as in Claude Desktop\'s mcpServers: {"name": '
            '{"command": "npx", "args": [...], "env": {...}} or {"url": "https://…"}}; merged '
            "over ~/.forge/mcp.json and the notebook folder's .forge/mcp.json.", empty={}),
    Setting("memory_long_term", "bool", True, "Long-term memory: the memory_search/memory_get "
            "tools, and compaction's daily logs in Forge.memory_dir."),
    Setting("memory_dir", "str", "", "Long-term memory folder (MEMORY.md, daily logs); empty: "
            ".forge/memory beside the notebook. A relative path is taken from the notebook's "
            "folder.", empty=""),
    Setting("memory_embedding_model", "str", "", "litellm embedding model for memory search's "
            "vectors (e.g. openai/text-embedding-3-small); empty: found from the provider keys; "
            "'none': keyword-only.", empty=""),
    Setting("memory_keyword_weight", "float", 0.3, "Weight of the BM25 keyword score in memory "
            "search."),
    Setting("memory_vector_weight", "float", 0.7, "Weight of vector similarity in memory search."),
    Setting("memory_half_life_days", "float", 7.0, "Days after which a daily log's matches count "
            "half (0: no decay)."),
    # The same default in JupyterLab and headless (nbconvert, CI): replay needs the same cell,
    # the same prompt text and the same history before it, which an interactive re-run of a
    # cell does not have (its history has grown) — so in practice it replays after a restart,
    # where a person wants the recorded answer too; a fresh one is `%%forge --live` away.
    Setting("replay", "enum", "auto", "auto: a %%forge cell whose turn was recorded (same "
            "notebook, cell, prompt and history before it) is replayed, no model call; a re-run "
            "tool that gives another result hands over to the model from there. strict: every "
            "%%forge cell must replay, and any difference fails the cell (CI without a key). "
            "off: always ask the model.", scope="notebook", choices=("auto", "off", "strict")),
    # What a vision model is sent of the images tools show (llm/images.py); a model without
    # vision, or an image past these, gets the text line instead.
    Setting("image_max_side", "int", 1024, "Longest side in pixels of an image sent to a "
            "vision model (larger ones are scaled down)."),
    Setting("image_max_bytes", "int", 250_000, "Most bytes of one image sent to a vision model "
            "(re-encoded, then scaled down until it fits)."),
    Setting("images_per_step", "int", 4, "Most images one model round's tool calls send to a "
            "vision model; the model is told of the rest."),
    Setting("images_per_request", "int", 8, "Most images one request to a vision model carries, "
            "the newest; older ones go as their text line, and the model is told."),
    Setting("notebook_context", "bool", True, "Each %%forge prompt carries a short note of where "
            "the person is: the notebook's name and cell count, the prompt's cell, the cells run "
            "since the last turn and the last error's type, message and last frames "
            "(FORGE_NOTEBOOK_CONTEXT=0 turns it off; notebook_read works either way).",
            scope="notebook"),
    Setting("cell_auto_accept", "bool", False, "The agent's cell edits (notebook_insert, "
            "notebook_edit, notebook_delete, notebook_move) are accepted at once instead of "
            "staged for your review in the notebook (each decision is still recorded).",
            scope="notebook"),
    Setting("cell_run_wait", "float", 60.0, "Seconds notebook_run waits for a cell it runs; a "
            "longer run answers the model 'still running' with the outputs so far, and goes on "
            "(its outputs land in the cell; Stop or %forge stop interrupts it).",
            scope="notebook"),
    Setting("flags", "list", [], 'Optional tool sets to turn on, e.g. ["search"]: webfetch and '
            "the provider's own web search where litellm says the model has it "
            '(FORGE_FLAGS=search); "question": the question tool also where no live widget or '
            "side panel shows the turn (it is on where one does)."),
)

BY_NAME: dict[str, Setting] = {s.name: s for s in SETTINGS}
FORGE_SETTINGS: tuple[Setting, ...] = tuple(s for s in SETTINGS if s.scope == "forge")


def from_environment(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The settings the ``FORGE_*`` variables set, parsed (only those present)."""
    env = os.environ if environ is None else environ
    return {s.name: s.parse(env[s.env]) for s in SETTINGS if s.env in env}


def resolve(explicit: Mapping[str, Any]) -> dict[str, Any]:
    """Every Forge setting's value in the Python API's spelling: explicit > variable > default.

    ``explicit`` maps names to what the caller passed (``UNSET`` where nothing was); a kernel's
    controller passes its config's values explicitly, so config wins over the variable there.
    """
    env = from_environment()
    values: dict[str, Any] = {}
    for s in FORGE_SETTINGS:
        given = explicit.get(s.name, UNSET)
        if given is UNSET:  # the variable's or the default's spelling of "nothing" is None here
            given = s.to_api(copy.copy(env.get(s.name, s.default)))
        values[s.name] = given  # an explicit value as passed: Forge(max_tokens=0) is refused
    return values
