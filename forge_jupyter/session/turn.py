"""A turn: what one prompt's run is decided from, once, before it starts (DESIGN §4–§5).

The session core reads its owner — the Forge facade — through ``Host`` (host.py), here:
``decide`` picks the agent and the model, layers the permissions (agent → session → prompt),
builds the tool table and the system prompt, and the request's parameters and scrubber, into
one ``Turn``; ``run_context`` makes the run's RunContext from it. The loop, the Processor and
compaction then read the RunContext, never the owner. Nothing in session/ imports forge.py.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial
from typing import Any

from ..agents import Agent
from ..llm.images import ImageLimits
from ..llm.web_search import SEARCH_FLAG, SEARCH_OPTIONS, supports_web_search
from ..message import Message, SessionInfo
from ..model_choice import ModelChoice, resolve, with_key
from ..scrub import Scrubber, secret_params
from ..system_prompt import build_system_prompt
from ..tools.base import Tool
from ..tools.permission import Permissions, Rule, agent_defaults, stored_rule
from ..tools.plugins import apply_chain
from ..tools.profiles import Profile, apply_profile, profile_for
from ..tools.tool_search import offer_lazily
from .allowance import Allowance
from .context import RunConfig, RunContext
from .host import Host, SessionHandle
from .permission_gate import PermissionGate
from .writer import Writer


@dataclass(frozen=True)
class Turn:
    """What one prompt's run is decided from; fixed for the whole run."""

    agent: Agent
    model: str
    notice: str | None  # said to the person about the model choice (the demo model, …)
    permissions: Permissions  # the layered rules (session grants are appended as given)
    tools: dict[str, Tool]  # the tool table the model sees
    system: str
    params: dict[str, Any]  # litellm keyword arguments
    scrubber: Scrubber  # what hides secrets in this run's rows, output and deltas


def decide(host: Host, info: SessionInfo, *, model: str | None = None, agent: str | None = None,
           tools: dict[str, bool] | None = None, permissions: Iterable[Any] = (),
           max_tokens: int | None = None, replaying: bool = False) -> Turn:
    """The turn of a prompt with these options in the session ``info``.

    ``replaying``: a replay, which asks no model unless it diverges. Its tool table is then
    the full one where the profile is ``auto``: picking it asks litellm the model's window,
    and importing litellm (~3 s) is what a replayed cell must not wait for. A replay that goes
    live settles the table first (``settle_tools``)."""
    agent_def = host.services.agents.get(agent or info.agent or host.default_agent)
    choice = choose_model(host, model, info.model, agent_def.model)
    rules = layered_permissions(host, info, agent_def, permissions, tools or {})
    profile = "full" if replaying and host.tool_profile == "auto" else None
    table = tool_table(host, choice.model, rules, profile, session_id=info.id)
    params = request_params(host, choice)
    if max_tokens is not None:  # this prompt's output limit wins over Forge.max_tokens
        params = {**params, "max_tokens": max_tokens}
    return Turn(agent=agent_def, model=choice.model, notice=choice.notice, permissions=rules,
                tools=table, system=system_prompt(host, agent_def, choice.model, table, profile),
                params=params, scrubber=Scrubber.from_environment(extra=secret_params(params)))


def settle_tools(host: Host, ctx: RunContext) -> None:
    """Before a replayed turn asks the model after all: the tool table and system prompt the
    profile setting picks for its model (``decide(replaying=True)`` took the full table)."""
    agent = host.services.agents.get(ctx.agent)
    ctx.tools = tool_table(host, ctx.model, ctx.permissions, session_id=ctx.session.id)
    ctx.system = system_prompt(host, agent, ctx.model, ctx.tools)


def run_context(host: Host, session: SessionHandle, turn: Turn, writer: Writer,
                view: list[Message], budget: float | None,
                allowance: Allowance | None = None) -> RunContext:
    """The run of ``turn``: what runLoop, the Processor and compaction carry. ``allowance``:
    a subagent's run takes from its prompt's (task.py); a person's prompt starts its own."""
    config = RunConfig(step_limit=host.step_limit, tool_timeout=host.tool_timeout,
                       retry=host.retry, lean_stream=host.lean_stream)
    if allowance is None:
        allowance = Allowance.top(config.step_limit, budget, turn.params.get("max_tokens"))
    return RunContext(
        session=session.info, writer=writer, bus=host.services.bus, model=turn.model,
        agent=turn.agent.name, system=turn.system, tools=turn.tools, params=turn.params,
        config=config, allowance=allowance, host=host, view_ids=[m.id for m in view],
        gate=PermissionGate(turn.permissions, host.services.approvals, session),
        scrub=turn.scrubber,
        output_dir=host.output_dir(session.id), prepare=partial(prepare_request, host),
        compaction_ratio=host.compaction_ratio, char_budget=host.char_budget,
        permissions=turn.permissions, display_available=host.display_available,
        images=ImageLimits(max_side=host.image_max_side, max_bytes=host.image_max_bytes,
                           per_step=host.images_per_step, per_request=host.images_per_request),
    )


def choose_model(host: Host, prompt_model: str | None, session_model: str | None,
                 agent_model: str | None = None) -> ModelChoice:
    """The prompt's model, else the session's, the agent's, the configured one (then the
    environment's key, a local Ollama, the offline demo model: model_choice.resolve)."""
    return resolve((prompt_model, "prompt"), (session_model, "session"),
                   (agent_model, "agent"), (host.model, "config"),
                   api_base=host.litellm_kwargs.get("api_base"), served=host.served_models)


def layered_permissions(host: Host, info: SessionInfo, agent: Agent,
                        prompt_rules: Iterable[Rule | dict | str] = (),
                        toggles: dict[str, bool] | None = None) -> Permissions:
    """The layered rules of one turn: agent (its defaults, its own rules, the Forge's
    configured rules) → session → this prompt (its rules, and ``tools={"x": False}``)."""
    registered = host.services.registry.all()
    mutating = [t.name for t in registered if t.mutating]
    tool_defaults = [Rule(t.name, "*", t.permission) for t in registered if t.permission]
    agent_layer = [*tool_defaults, *agent_defaults(agent.mode, mutating), *agent.permissions,
                   *host.permissions]
    meta = info.metadata
    session_layer = [stored_rule(r) for r in meta.get("permissions", ())]
    prompt_layer = [Rule.parse(r) for r in prompt_rules]
    prompt_layer += [Rule(name, "*", "deny") for name, on in (toggles or {}).items() if not on]
    # this kernel's answers; a stored row grants nothing
    grants = host.services.approvals.granted(info.id)
    return Permissions([("agent", agent_layer), ("session", session_layer),
                        ("prompt", prompt_layer)], grants)


def tool_table(host: Host, model: str, permissions: Permissions,
               profile: Profile | None = None, *, session_id: str | None = None) -> dict[str, Tool]:
    """Registry → filter by model and flags → the tool profile (lean: fewer builtins, short
    descriptions; ``profile``, else the setting's for ``model``) → minus tools denied for
    every argument → many MCP tools behind tool_search (the ones ``session_id`` loaded stay)."""
    table = host.services.registry.resolve(model=model, flags=host.flags)
    table = apply_profile(table, host.services.builtins,
                          profile or profile_for(host.tool_profile, model))
    table = {n: t for n, t in table.items() if not permissions.denied_for_all(n)}
    loaded = host.services.loaded_tools.setdefault(session_id or "", set())
    return offer_lazily(table, host.tool_search_tokens, loaded)


def system_prompt(host: Host, agent: Agent, model: str, tools: dict[str, Tool],
                  profile: Profile | None = None) -> str:
    system = build_system_prompt(agent=agent, tools=tools, custom=host.system,
                                 in_kernel=bool(host.services.namespace.get("get_ipython")),
                                 profile=profile or profile_for(host.tool_profile, model))
    hook = host.services.plugins.hook
    return apply_chain(hook.forge_system_prompt(system=system, agent=agent.name, model=model),
                       system)


def request_params(host: Host, choice: ModelChoice) -> dict[str, Any]:
    """litellm keyword arguments of one prompt: the stream timeout and output limit, the
    Forge's extra kwargs, then the chosen model's (an api_base, a key); a server at an
    api_base with no key configured gets a placeholder (model_choice.with_key)."""
    base: dict[str, Any] = {} if host.stream_timeout is None else {"stream_timeout": host.stream_timeout}
    if host.max_tokens is not None:
        base["max_tokens"] = host.max_tokens
    if SEARCH_FLAG in host.flags and supports_web_search(choice.model):
        base["web_search_options"] = dict(SEARCH_OPTIONS)  # the provider searches itself
    return with_key(choice.model, {**base, **host.litellm_kwargs, **choice.params})


def prepare_request(host: Host, request: Any) -> Any:
    """Let plugins rewrite tool definitions, params and messages of a model request."""
    hook = host.services.plugins.hook
    if not host.services.plugins.get_plugins():
        return request
    tools = []
    for definition in request.tools:
        name = definition["function"]["name"]
        tool = host.services.registry.get(name)
        tools.append(apply_chain(hook.forge_tool_definition(tool=tool, definition=definition,
                                                             model=request.model), definition))
    request.tools = tools
    for extra in hook.forge_request_params(params=dict(request.params), model=request.model):
        if extra:
            request.params = {**request.params, **extra}
    request.messages = apply_chain(hook.forge_transform_messages(
        messages=request.messages, model=request.model), request.messages)
    return request
