"""The Forge facade: configuration + store + tool registry + agents + sessions, in one object.

    from forge_jupyter import Forge
    f = Forge(db="history.duckdb", model="openai/gpt-4o-mini")
    s = f.session("analysis")
    print(s.prompt("What columns does df have?").text)

Unknown keyword arguments (``api_base``, ``api_key``, ``temperature``, …) go to litellm.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from .agents import Agent, AgentSet
from .bus import Bus, SessionStatus
from .errors import NotFound, ToolError, positive_int, positive_number
from .model import Event, SessionInfo
from .model_choice import MAX_TOKENS_HINT, ModelChoice, resolve, with_key
from .scrub import Scrubber, remember, secret_params
from .session.approval import Answer, ApprovalRequest, Approvals
from .session.context import RunConfig
from .session.retry import RetryPolicy
from .session.session import Session
from .store.base import Store
from .store.memory import MemoryStore
from .store.projection import Projection, Rejected
from .system_prompt import build_system_prompt
from .tools.base import Tool, tool_from_function
from .tools.permission import PathSubject, Permissions, Rule, agent_defaults
from .tools.plugins import apply_chain, plugin_manager
from .tools.profiles import apply_profile, check_profile, profile_for
from .tools.registry import ToolRegistry


def open_store(db: str | os.PathLike[str] | Store | None, *, tenant: str = "default") -> Store:
    """A Store from a path (DuckDB), ``":memory:"``, or a Store; None → the default file."""
    if isinstance(db, Store):
        return db
    if db == ":memory:":
        return MemoryStore(tenant_id=tenant)
    from .store.duckdb import DuckDBStore, default_db_path

    path = Path(db).expanduser() if db is not None else default_db_path()
    return DuckDBStore(path, tenant_id=tenant)


class Forge:
    def __init__(
        self,
        db: str | os.PathLike[str] | Store | None = None,
        *,
        model: str | None = None,
        tenant: str = "default",
        agent: str = "build",
        agents: dict[str, Agent | dict[str, Any]] | None = None,
        permissions: Iterable[Rule | dict | str] = (),
        system: str | None = None,
        tools: Iterable[Tool | Callable[..., Any]] = (),
        builtin_tools: bool = True,
        flags: Iterable[str] = (),
        step_limit: int = 25,
        tool_timeout: float = 300.0,
        stream_timeout: float | None = 120.0,
        max_tokens: int | None = None,
        tool_profile: str = "auto",
        compaction_ratio: float = 0.8,
        char_budget: int = 400_000,
        retry: RetryPolicy | None = None,
        namespace: dict[str, Any] | None = None,
        root: str | os.PathLike[str] | None = None,
        output_root: str | os.PathLike[str] | None = None,
        load_plugins: bool = True,
        max_age: Any = None,
        **litellm_kwargs: Any,
    ) -> None:
        self.store = open_store(db, tenant=tenant)
        self.model = model
        self.default_agent = agent
        self.agents = AgentSet()
        for name, value in (agents or {}).items():
            self.agents.add(Agent.from_config(name, value))
        self.agents.get(agent)  # a clear error now, not at the first prompt
        self.permissions = [Rule.parse(r) for r in permissions]
        self.system = system
        self.flags = frozenset(flags)
        self.step_limit = step_limit
        self.tool_timeout = tool_timeout
        self.stream_timeout = stream_timeout
        self.max_tokens = max_tokens
        self.tool_profile = tool_profile
        self.compaction_ratio = compaction_ratio
        self.char_budget = char_budget
        self.retry = retry or RetryPolicy()
        self.litellm_kwargs = litellm_kwargs
        for name, value in secret_params(litellm_kwargs):  # exports and saved outputs hide it too
            remember(name, value)
        # The notebook's own variables when running in a kernel; a private namespace otherwise.
        self.namespace: dict[str, Any] = namespace if namespace is not None else {}
        self.root = str(Path(root).resolve()) if root is not None else None
        self._output_root = Path(output_root) if output_root is not None else None
        # Whether a notebook front end shows the tools' rich outputs (plots): the notebook
        # controller sets it; the python tool tells the model whether the person saw a plot.
        self.display_available = False
        self.bus = Bus()
        self.projection = Projection(self.store, on_rejected=self._rows_rejected)
        self.approvals = Approvals(self.bus)
        self.registry = ToolRegistry()
        self.plugins = plugin_manager(load_entry_points=load_plugins)
        self._builtins: dict[str, Tool] = {}  # what the lean tool profile may shorten or drop
        if builtin_tools:
            from .tools.builtin import builtin_tools as builtins

            for t in builtins():
                self._builtins[t.name] = self.registry.register(t)
        for plugged in self.plugins.hook.forge_tools(forge=self):
            for t in plugged or ():
                self.add_tool(t)
        for t in tools:
            self.add_tool(t)
        # Retention: only when configured, never by default (a timedelta or "30d").
        self.max_age = max_age
        self.cleanup_at_startup()

    def __repr__(self) -> str:
        return f"Forge(store={self.store!r}, model={self.model!r})"

    # -- sessions --------------------------------------------------------------------------

    def session(self, name_or_id: str | None = None, *, new: bool = False, **fields: Any) -> Session:
        """An existing session by name or id, or a new one (``new=True`` or no such name)."""
        if name_or_id is not None and not new:
            try:
                return Session(self, self.store.find_session(name_or_id))
            except NotFound:
                if name_or_id.startswith("ses_"):
                    raise
        directory = fields.pop("directory", None) or self.root or os.getcwd()
        info = SessionInfo(name=name_or_id, model=fields.pop("model", None),
                           agent=fields.pop("agent", self.default_agent),
                           directory=str(directory), **fields)
        return Session(self, self.store.create_session(info))

    def fork(self, session: Session, *, at: str | None = None, name: str | None = None) -> Session:
        self.flush()
        if at is None:
            n = self.store.timeline_length(session.id)
            if n == 0:
                raise NotFound(f"session {session.id} has no messages to fork from")
            at = self.store.timeline(session.id, cursor=str(n - 1), limit=1, with_parts=False).items[0].id
        info = SessionInfo(name=name, agent=session.info.agent, model=session.info.model,
                           directory=session.info.directory)
        forked = self.store.fork(session.id, at, info)
        return Session(self, forked)

    # -- tools -----------------------------------------------------------------------------

    def add_tool(self, tool: Tool | Callable[..., Any]) -> Tool:
        if not isinstance(tool, Tool):
            tool = tool_from_function(tool)
        return self.registry.register(tool)

    def tool(self, fn: Callable[..., Any] | None = None, *, name: str | None = None,
             mutating: bool = False, timeout: float | None = None) -> Any:
        """Decorator: register a plain (sync or async) function as a tool.

        Its signature, type hints and docstring become the JSON Schema and description. A
        custom tool is allowed by default; ``mutating=True`` makes the ``build`` agent ask
        before each call and the ``plan`` agent deny it.
        """

        def register(f: Callable[..., Any]) -> Callable[..., Any]:
            self.add_tool(tool_from_function(f, name=name, mutating=mutating, timeout=timeout))
            return f

        return register(fn) if fn is not None else register

    def turn_permissions(self, session: Session, agent: Agent,
                         prompt_rules: Iterable[Rule | dict | str] = (),
                         toggles: dict[str, bool] | None = None) -> Permissions:
        """The layered rules of one turn: agent (its defaults, its own rules, the Forge's
        configured rules) → session → this prompt (its rules, and ``tools={"x": False}``)."""
        mutating = [t.name for t in self.registry.all() if t.mutating]
        agent_layer = [*agent_defaults(agent.mode, mutating), *agent.permissions, *self.permissions]
        meta = session.info.metadata
        session_layer = [Rule.parse(r) for r in meta.get("permissions", ())]
        prompt_layer = [Rule.parse(r) for r in prompt_rules]
        prompt_layer += [Rule(name, "*", "deny") for name, on in (toggles or {}).items() if not on]
        grants = [Rule.parse(r) for r in meta.get("grants", ())]
        return Permissions([("agent", agent_layer), ("session", session_layer),
                            ("prompt", prompt_layer)], grants)

    def tools_for_turn(self, model: str, permissions: Permissions) -> dict[str, Tool]:
        """Registry → filter by model and flags → the tool profile (lean: fewer builtins, short
        descriptions) → minus tools denied for every argument."""
        table = self.registry.resolve(model=model, flags=self.flags)
        table = apply_profile(table, self._builtins, profile_for(self.tool_profile, model))
        return {n: t for n, t in table.items() if not permissions.denied_for_all(n)}

    def permission_gate(self, session: Session, permissions: Permissions) -> Callable[..., Any]:
        """The check run before each tool call: None to go ahead, else the reason it may not."""
        approvals = self.approvals

        async def gate(ctx: Any, tool: Tool, part: Any) -> str | None:
            try:  # a file tool's path, normalized under the root; never matched raw
                subject = tool.permission_subject(part.input, ctx.session.directory, ctx.output_dir)
            except ToolError as exc:
                ctx.writer.record(Event(session_id=session.id, type="permission.denied", actor="forge",
                                        data={"tool": tool.name, "reason": str(exc)[:500],
                                              "part_id": part.id}))
                return f"Permission denied: {exc}"
            verdict = permissions.evaluate(tool.name, subject)
            if verdict.action == "allow":
                return None
            facts = {"tool": tool.name, "subject": str(subject)[:500], "rule": str(verdict.rule),
                     "layer": verdict.layer, "part_id": part.id}
            if verdict.action == "deny":
                ctx.writer.record(Event(session_id=session.id, type="permission.denied",
                                        actor="forge", data=facts))
                on = f" on {subject}" if isinstance(subject, PathSubject) else ""
                return (f"Permission denied: {tool.name} is not allowed{on} here "
                        f"(rule {verdict.rule}, {verdict.layer} layer). Do not retry it; tell the "
                        "user what you wanted to do instead.")
            scrub = ctx.writer.scrubber  # the request is shown on the screen
            request = ApprovalRequest(session.id, part.id, tool.name, scrub.data(dict(part.input)),
                                      scrub(str(subject)) or "", str(verdict.rule))
            ctx.writer.record(Event(session_id=session.id, type="permission.asked", actor="agent",
                                    data={**facts, "request_id": request.id}))
            if not approvals.can_answer:
                reason = ("no one can answer approvals here (no approval handler is registered, "
                          "as in a plain script)")
                ctx.writer.record(Event(session_id=session.id, type="permission.answered",
                                        actor="forge", data={"request_id": request.id,
                                                             "answer": "deny", "reason": reason}))
                return (f"Permission denied: {tool.name} needs a person's approval and {reason}. "
                        "Tell the user what you wanted to do; they can allow it with a "
                        "permission rule or answer approvals in the notebook.")
            part.metadata["approval"] = request.id
            ctx.writer.update_part(part)
            await ctx.flush()  # the request is visible to other processes (the side panel)
            answer = await approvals.ask(request)
            ctx.writer.record(Event(session_id=session.id, type="permission.answered",
                                    actor=answer.by, data={"request_id": request.id,
                                                           "answer": answer.answer,
                                                           "reason": answer.reason}))
            part.metadata["approval_answer"] = answer.answer
            if answer.answer == "deny":
                why = f": {answer.reason}" if answer.reason else "."
                return f"The user denied this {tool.name} call{why}"
            if answer.answer == "session":
                grant = Rule(tool.name, "*", "allow")
                permissions.grants.append(grant)
                await asyncio.to_thread(self._remember_grant, session, grant)
            return None

        return gate

    def _remember_grant(self, session: Session, grant: Rule) -> None:
        info = self.store.get_session(session.id)
        grants = [*info.metadata.get("grants", []),
                  {"tool": grant.tool, "pattern": grant.pattern, "action": grant.action}]
        session._info = self.store.update_session(
            info.model_copy(update={"metadata": {**info.metadata, "grants": grants}}))

    # -- approvals -------------------------------------------------------------------------

    def approve(self, request_id: str, answer: str = "once", reason: str | None = None,
                by: str = "user") -> None:
        """Answer a pending approval: ``once``, ``session`` (this tool, for the session) or
        ``deny`` (with a reason the model reads). Safe to call from any thread."""
        self.approvals.answer(request_id, Answer(answer, reason, by))

    def on_approval(self, handler: Callable[[ApprovalRequest], Any]) -> Callable[[], None]:
        """Register an approval handler (it may answer at once, or return None and let
        ``approve`` answer later). Returns the function that unregisters it."""
        return self.approvals.add_handler(handler)

    # -- models and running ---------------------------------------------------------------

    def choose_model(self, prompt_model: str | None, session_model: str | None,
                     agent_model: str | None = None) -> ModelChoice:
        return resolve((prompt_model, "prompt"), (session_model, "session"),
                       (agent_model, "agent"), (self.model, "config"))

    def system_prompt(self, agent: Agent, model: str, tools: dict[str, Tool]) -> str:
        system = build_system_prompt(agent=agent, tools=tools, custom=self.system,
                                     in_kernel=bool(self.namespace.get("get_ipython")),
                                     profile=profile_for(self.tool_profile, model))
        return apply_chain(self.plugins.hook.forge_system_prompt(system=system, agent=agent.name,
                                                                 model=model), system)

    def prepare_request(self, request: Any) -> Any:
        """Let plugins rewrite tool definitions, params and messages of a model request."""
        hook = self.plugins.hook
        if not self.plugins.get_plugins():
            return request
        tools = []
        for definition in request.tools:
            name = definition["function"]["name"]
            tool = self.registry.get(name)
            tools.append(apply_chain(hook.forge_tool_definition(tool=tool, definition=definition,
                                                                 model=request.model), definition))
        request.tools = tools
        for extra in hook.forge_request_params(params=dict(request.params), model=request.model):
            if extra:
                request.params = {**request.params, **extra}
        request.messages = apply_chain(hook.forge_transform_messages(
            messages=request.messages, model=request.model), request.messages)
        return request

    @property
    def stream_timeout(self) -> float | None:
        """Seconds the model server may send nothing — before its first byte or in the middle
        of an answer — before the request fails (and is retried like a dropped connection).
        None: litellm's own request timeout (600 s)."""
        return self._stream_timeout

    @stream_timeout.setter
    def stream_timeout(self, value: float | None) -> None:
        self._stream_timeout = None if value is None else positive_number(
            value, "stream_timeout", "Give the seconds the model server may stay silent "
            "(Forge.stream_timeout / FORGE_STREAM_TIMEOUT, default 120), or None for "
            "litellm's own limit.")

    @property
    def max_tokens(self) -> int | None:
        """The most tokens one model step may generate (litellm's ``max_tokens``); None: the
        model server's own default. A step cut off there ends the run, marked as such."""
        return self._max_tokens

    @max_tokens.setter
    def max_tokens(self, value: int | None) -> None:
        self._max_tokens = None if value is None else positive_int(value, "max_tokens", MAX_TOKENS_HINT)

    @property
    def tool_profile(self) -> str:
        """auto | full | lean: which tool table and system prompt a prompt gets
        (tools/profiles.py); auto is lean for models with a small context window."""
        return self._tool_profile

    @tool_profile.setter
    def tool_profile(self, value: str) -> None:
        self._tool_profile = check_profile(value)

    def request_params(self, choice: ModelChoice) -> dict[str, Any]:
        """litellm keyword arguments of one prompt: the stream timeout and output limit, the
        Forge's extra kwargs, then the chosen model's (an api_base, a key); a server at an
        api_base with no key configured gets a placeholder (model_choice.with_key)."""
        base: dict[str, Any] = {} if self.stream_timeout is None else {"stream_timeout": self.stream_timeout}
        if self.max_tokens is not None:
            base["max_tokens"] = self.max_tokens
        return with_key(choice.model, {**base, **self.litellm_kwargs, **choice.params})

    def run_config(self) -> RunConfig:
        return RunConfig(step_limit=self.step_limit, tool_timeout=self.tool_timeout, retry=self.retry)

    def scrubber(self, params: dict[str, Any]) -> Scrubber:
        """What hides secrets in one prompt's rows, output and deltas: the environment's
        secret variables, every key configured on a Forge, and the keys in ``params``."""
        return Scrubber.from_environment(extra=secret_params(params))

    def output_dir(self, session_id: str) -> str:
        """Where full outputs of truncated tool results are saved for the session."""
        base = self._output_root
        if base is None:
            path = getattr(self.store, "path", None)
            base = Path(path).parent / "outputs" if path else Path.home() / ".forge" / "outputs"
        return str(base / session_id)

    def announce(self, session_id: str, notice: str) -> None:
        """Tell the person something about the run (shown by the widget; logged as an event)."""
        self.bus.publish(SessionStatus(session_id, "notice", {"message": notice}))
        self.projection.put_event(Event(session_id=session_id, type="notice", data={"message": notice}))

    # -- persistence -----------------------------------------------------------------------

    def _rows_rejected(self, rows: list[Rejected]) -> None:
        """Say so when the store refused rows (the projection wrote everything else)."""
        for sid in dict.fromkeys(r.session_id for r in rows if r.session_id):
            lost = [r for r in rows if r.session_id == sid]
            self.bus.publish(SessionStatus(sid, "notice", {"message": (
                f"{len(lost)} row(s) of this session could not be stored ({lost[0].reason}); "
                "each was replaced by a note saying why and everything else was saved. "
                "forge.events(type='store.rejected') lists them.")}))

    def flush(self) -> int:
        """Commit every buffered row now."""
        return self.projection.flush()

    async def flush_async(self) -> None:
        if self.projection.pending:
            await asyncio.to_thread(self.projection.flush)

    def close(self) -> None:
        self.flush()
        self.store.close()

    def __enter__(self) -> Forge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- history as data ------------------------------------------------------------------
    # DataFrames and SQL over the store's views (frames.py, store/views.py), export and
    # import (export.py), retention (retention.py). Each read flushes buffered rows first.
    # Frames return pandas DataFrames and ages are datetime.timedelta — annotated Any here, as
    # this module imports neither (pandas loads only when a frame is asked for).

    def sessions(self, *, since: Any = None, until: Any = None) -> Any:
        """Live sessions with their step, token and cost totals (a DataFrame)."""
        from . import frames

        self.flush()
        return frames.sessions(self.store, since=since, until=until)

    def messages(self, session: Any = None, *, role: Any = None, model: Any = None,
                 since: Any = None, until: Any = None) -> Any:
        """Message bodies (of a session: those it wrote), oldest first (a DataFrame)."""
        from . import frames

        self.flush()
        return frames.messages(self.store, session, role=role, model=model, since=since,
                               until=until)

    def parts(self, session: Any = None, type: Any = None, *, since: Any = None,
              until: Any = None) -> Any:
        """Parts, optionally of one or more types, in id order (a DataFrame)."""
        from . import frames

        self.flush()
        return frames.parts(self.store, session, type, since=since, until=until)

    def tool_calls(self, session: Any = None, tool: Any = None, state: Any = None, *,
                   model: Any = None, since: Any = None, until: Any = None) -> Any:
        """Tool calls: state, duration, input/output size, error (a DataFrame)."""
        from . import frames

        self.flush()
        return frames.tool_calls(self.store, session, tool, state, model=model, since=since,
                                 until=until)

    def costs(self, by: str | Iterable[str] = "session", *, session: Any = None,
              model: Any = None, since: Any = None, until: Any = None) -> Any:
        """Tokens and cost by session, day, model, agent or cell (a DataFrame)."""
        from . import frames

        self.flush()
        return frames.costs(self.store, by if isinstance(by, str) else list(by),
                            session=session, model=model, since=since, until=until)

    def compactions(self, session: Any = None, *, since: Any = None, until: Any = None) -> Any:
        """Compactions: when, reason, auto, tokens before/after (a DataFrame)."""
        from . import frames

        self.flush()
        return frames.compactions(self.store, session, since=since, until=until)

    def context(self, session: Any = None, *, since: Any = None, until: Any = None) -> Any:
        """Per model call: the tokens sent and the compaction boundary in force (a DataFrame)."""
        from . import frames

        self.flush()
        return frames.context(self.store, session, since=since, until=until)

    def turns(self, session: Any = None, *, since: Any = None, until: Any = None) -> Any:
        """Per user message: the prompt, its cell, what answering it took (a DataFrame)."""
        from . import frames

        self.flush()
        return frames.turns(self.store, session, since=since, until=until)

    def history(self, session: Any, include_superseded: bool = False) -> Any:
        """The session's timeline with ``visible_to_model`` (a DataFrame); messages a
        compaction superseded only with ``include_superseded=True``."""
        from . import frames

        self.flush()
        return frames.history(self.store, session, include_superseded)

    def events(self, session: Any = None, type: Any = None, *, since: Any = None,
               until: Any = None) -> Any:
        """Events: compactions, forks, permissions, aborts, deletions, … (a DataFrame)."""
        from . import frames

        self.flush()
        return frames.events(self.store, session, type, since=since, until=until)

    def sql(self, query: str, params: Any = None) -> Any:
        """One read-only SELECT over this tenant's tables and views (docs/schema.md)."""
        from . import frames

        self.flush()
        return frames.sql(self.store, query, params)

    def export_session(self, session: Any, path: str | os.PathLike[str]) -> Path:
        """Write a session to JSON (atomic, secrets scrubbed, orphaned calls closed)."""
        from . import export, frames

        self.flush()
        return export.export_session(self.store, frames.session_id(self.store, session), path)

    def import_session(self, path: str | os.PathLike[str], *, name: str | None = None,
                       new_ids: bool = False) -> Session:
        """Import an exported session, all or nothing; never overwrites (see export.py)."""
        from . import export

        return Session(self, export.import_session(self.store, path, name=name,
                                                   new_ids=new_ids))

    def export_parquet(self, view: str, path: str | os.PathLike[str]) -> Path:
        """Write one of the views (docs/schema.md) to a Parquet file, atomically."""
        from . import export

        self.flush()
        return export.export_parquet(self.store, view, path)

    @property
    def max_age(self) -> Any:  # datetime.timedelta | None
        """Sessions idle longer than this are deleted by ``cleanup()`` — and when the Forge
        starts, if set (``cleanup_at_startup``). None (the default): nothing is deleted."""
        return getattr(self, "_max_age", None)

    @max_age.setter
    def max_age(self, value: Any) -> None:  # timedelta | "30d" | None
        from .retention import parse_max_age

        self._max_age = parse_max_age(value)

    def delete_session(self, session: Any) -> None:
        """Delete a session (not while it runs), its bodies no fork shares, and its saved
        outputs; recorded as a ``session.deleted`` event."""
        from . import frames, retention

        self.flush()
        sid = frames.session_id(self.store, session)
        assert sid is not None
        retention.delete_session(self.store, sid, output_dir=self.output_dir(sid))

    def cleanup(self, max_age: Any = None, *,
                trigger: str = "on demand") -> list[str]:
        """Delete the sessions idle longer than ``max_age`` (default: the configured one);
        returns their ids; recorded as events."""
        from . import retention

        age = retention.parse_max_age(max_age) if max_age is not None else self.max_age
        if age is None:
            raise ValueError("cleanup() needs a max_age (a timedelta or e.g. '30d'), given here "
                             "or configured as Forge(max_age=…)")
        self.flush()
        return retention.cleanup(self.store, age, trigger=trigger, output_dir=self.output_dir)

    def cleanup_at_startup(self) -> list[str]:
        """What ``__init__`` runs last: ``cleanup()`` when ``max_age`` is set, else nothing."""
        return self.cleanup(trigger="startup") if self.max_age is not None else []
