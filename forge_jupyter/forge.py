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
import warnings
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .agents import Agent, AgentSet
from .bus import Bus, SessionStatus
from .errors import InvalidOption, NotFound
from .history_data import HistoryData, forwarding
from .ids import check_id, id_path, looks_like_id
from .imported import new_session_directory
from .memory import MEMORY_FLAG, LongTermMemory, Weights, memory_path, project_of
from .message import Event, SessionInfo
from .model_choice import ServedModels
from .render import message_html as _message_html  # noqa: F401 — registers Message._repr_html_
from .scrub import Scrubber, remember, secret_params
from .session.approval import Answer, ApprovalRequest, Approvals
from .session.question import QuestionHandler, Questions
from .session.retry import RetryPolicy
from .session.services import Services
from .session.session import Session
from .settings import BY_NAME, UNSET, resolve
from .settings_apply import APPLY, MEMORY_SETTINGS, checked_setting
from .store.base import Store
from .store.open import open_store  # one opener for the kernel, the CLI and the server
from .store.projection import Projection, Rejected
from .tools.base import Tool, tool_from_function
from .tools.notebook_edit import NotebookEditor
from .tools.notebook_read import NotebookReader
from .tools.permission import ArgumentKind, Rule
from .tools.plugins import plugin_manager
from .tools.registry import ToolRegistry
from .tracing import Tracing  # the switch alone: OpenTelemetry comes once tracing is on

if TYPE_CHECKING:  # pandas loads only when a comparison runs
    from .comparison import Comparison


class Forge:
    """Configuration, its services (``services``: store, bus, approvals, tools, agents, …),
    sessions to prompt, and the history as data (``data``).

    The session core (session/) reads it through ``session.host.Host`` when a turn starts;
    ``forge.costs()``, ``forge.sql(...)`` and the rest are ``forge.data``'s (history_data.py).
    """

    _open_store = staticmethod(open_store)  # copy_to opens its destination with it

    def __init__(
        self,
        db: str | os.PathLike[str] | Store | None = UNSET,
        *,
        model: str | None = UNSET,
        tenant: str = UNSET,
        agent: str = UNSET,
        agents: dict[str, Agent | dict[str, Any]] | None = None,
        permissions: Iterable[Rule | dict | str] = UNSET,
        system: str | None = None,
        tools: Iterable[Tool | Callable[..., Any]] = (),
        builtin_tools: bool = UNSET,
        flags: Iterable[str] = UNSET,
        step_limit: int = UNSET,
        tool_timeout: float = UNSET,
        shell_timeout: float = UNSET,
        stream_timeout: float | None = UNSET, lean_stream: bool = UNSET,
        max_tokens: int | None = UNSET,
        tool_profile: str = UNSET,
        tool_search_tokens: int = UNSET,
        compaction_ratio: float = UNSET,
        char_budget: int = UNSET,
        image_max_side: int = UNSET,
        image_max_bytes: int = UNSET,
        images_per_step: int = UNSET,
        images_per_request: int = UNSET,
        retry: RetryPolicy | None = None,
        namespace: dict[str, Any] | None = None,
        root: str | os.PathLike[str] | None = None,
        output_root: str | os.PathLike[str] | None = None,
        load_plugins: bool = True,
        max_age: Any = UNSET,
        mcp_servers: dict[str, Any] | None = UNSET,
        skills: bool = True,
        memory_long_term: bool = UNSET,
        memory_dir: str | os.PathLike[str] | None = UNSET,
        memory_embedding_model: str | None = UNSET,
        memory_keyword_weight: float = UNSET,
        memory_vector_weight: float = UNSET,
        memory_half_life_days: float = UNSET,
        api_base: str | None = UNSET,
        tracing: str = UNSET,
        **litellm_kwargs: Any,
    ) -> None:
        # Every setting not passed here comes from its FORGE_* variable, else its declared
        # default (settings.py) — the same in a script as in a kernel, whose controller passes
        # its config's values explicitly.
        given = {k: v for k, v in locals().items() if k in BY_NAME}
        values = resolve(given)
        if "api_key" not in litellm_kwargs and os.environ.get("FORGE_API_KEY"):
            litellm_kwargs["api_key"] = os.environ["FORGE_API_KEY"]  # a key-less local server's
        store = open_store(values["db"], tenant=values["tenant"])
        bus = Bus()
        self.services = Services(
            store=store, projection=Projection(store, on_rejected=self._rows_rejected), bus=bus,
            approvals=Approvals(bus), questions=Questions(bus), registry=ToolRegistry(),
            agents=AgentSet(), plugins=plugin_manager(load_entry_points=load_plugins),
            # the notebook's own variables when running in a kernel; a private one otherwise
            namespace=namespace if namespace is not None else {})
        self.data = HistoryData(self)
        for name, value in (agents or {}).items():
            self.agents.add(Agent.from_config(name, value))
        self.system = system
        self.flags: frozenset[str] = frozenset()
        self.retry = retry or RetryPolicy()
        self.litellm_kwargs = litellm_kwargs
        self.served_models = ServedModels()  # api_base with no model: listed once, not per prompt
        # (session, notice) said once: the model choice's notice opens a session, not every turn
        self.notices_said: set[tuple[str, str]] = set()
        for name, value in secret_params(litellm_kwargs):  # exports and saved outputs hide it too
            remember(name, value)
        self.root = str(Path(root).resolve()) if root is not None else None
        self._output_root = Path(output_root) if output_root is not None else None
        # Whether a notebook front end shows the tools' rich outputs (plots): the notebook
        # controller sets it; the python tool tells the model whether the person saw a plot.
        self.display_available = False
        self._memory_sig: tuple[Any, ...] | None = None
        from .mcp import McpServers

        # MCP servers (mcp/): configured now, started by the first prompt (prepare_tools).
        self.mcp = McpServers(self.root or os.getcwd(), values["mcp_servers"])
        self._memory_settings = {k: values[k] for k in MEMORY_SETTINGS}
        self.tracing = "off"  # the setting; services.tracer records while it is on (tracing/)
        self.configure(values)  # every setting that a later %config may change again
        if values["builtin_tools"]:
            from .memory.tools import memory_tools
            from .tools.builtin import builtin_tools as make_builtins

            for t in [*make_builtins(), *memory_tools(lambda: self.memory)]:
                self.builtins[t.name] = self.registry.register(t)
        for plugged in self.plugins.hook.forge_tools(forge=self):
            for t in plugged or ():
                self.add_tool(t)
        for t in tools:
            self.add_tool(t)
        for rule in self.permissions:
            rule.check()  # now that its tools are known: a rule over a custom code tool's code
        from .session.commands import Commands
        from .skills import Skills

        # SKILL.md folders (skills/) and prompt templates in .forge/commands/, run by name
        self.skills = Skills(self.root or os.getcwd()) if skills else None
        self.commands = Commands(self.root or os.getcwd())
        # Retention: only when configured, never by default (a timedelta or "30d").
        self.max_age = values["max_age"]
        self.cleanup_at_startup()

    def __repr__(self) -> str:
        return f"Forge(store={self.store!r}, model={self.model!r})"

    # -- its services (session/services.py says what each holds), under their names as before

    @property
    def store(self) -> Store: return self.services.store  # noqa: E704
    @property
    def projection(self) -> Projection: return self.services.projection  # noqa: E704
    @property
    def bus(self) -> Bus: return self.services.bus  # noqa: E704
    @property
    def approvals(self) -> Approvals: return self.services.approvals  # noqa: E704
    @property
    def questions(self) -> Questions: return self.services.questions  # noqa: E704
    @property
    def registry(self) -> ToolRegistry: return self.services.registry  # noqa: E704
    @property
    def agents(self) -> AgentSet: return self.services.agents  # noqa: E704
    @property
    def plugins(self) -> Any: return self.services.plugins  # noqa: E704
    @property
    def notebook(self) -> NotebookReader | None: return self.services.notebook  # noqa: E704
    @property
    def editor(self) -> NotebookEditor | None: return self.services.editor  # noqa: E704
    @property
    def builtins(self) -> dict[str, Tool]: return self.services.builtins  # noqa: E704
    @property
    def namespace(self) -> dict[str, Any]: return self.services.namespace  # noqa: E704
    @property
    def memory(self) -> LongTermMemory | None: return self.services.memory  # noqa: E704
    @property
    def tracer(self) -> Tracing | None: return self.services.tracer  # noqa: E704
    @property
    def loaded_tools(self) -> dict[str, set[str]]: return self.services.loaded_tools  # noqa: E704

    def configure(self, values: dict[str, Any]) -> None:
        """Apply settings that take effect at the next prompt (``%config`` lands here too).

        ``values`` holds Forge settings in the Python API's spelling (``settings.resolve``);
        those that need a new store (``db``, ``tenant``, ``builtin_tools``, ``max_age``) are
        read when the Forge is built, and a notebook builds a new Forge when they change.
        """
        live = {k: v for k, v in values.items() if not BY_NAME[k].rebuilds}
        for name, value in live.items():
            if name in MEMORY_SETTINGS:
                self._memory_settings[name] = value
            elif name in APPLY:
                APPLY[name](self, value)
            else:  # a declared setting nobody reads would silently do nothing
                raise InvalidOption(f"the setting {name!r} has no way to apply; declare how "
                                    "in settings_apply.py")
        if live.keys() & set(MEMORY_SETTINGS):  # one LongTermMemory for the six of them
            m = self._memory_settings
            self.set_memory(m["memory_dir"], enabled=m["memory_long_term"],
                            embedding_model=m["memory_embedding_model"],
                            keyword_weight=m["memory_keyword_weight"],
                            vector_weight=m["memory_vector_weight"],
                            half_life_days=m["memory_half_life_days"])

    # -- sessions --------------------------------------------------------------------------

    def session(self, name_or_id: str | None = None, *, new: bool = False, **fields: Any) -> Session:
        """An existing session by name or id, or a new one (``new=True`` or no such name)."""
        if name_or_id is not None and looks_like_id(name_or_id, "session"):
            check_id(name_or_id, "session")  # ses_… is an id, never a name: of the grammar
        if name_or_id is not None and not new:
            try:
                return Session(self, self.store.find_session(name_or_id))
            except NotFound:
                if name_or_id.startswith("ses_"):
                    raise
        directory = new_session_directory(fields.pop("directory", None), self.root or os.getcwd())
        info = SessionInfo(name=name_or_id, model=fields.pop("model", None),
                           agent=fields.pop("agent", self.default_agent),
                           directory=str(directory), **fields)
        return Session(self, self.store.create_session(info))

    def fork(self, session: Session, *, at: str | None = None, name: str | None = None) -> Session:
        """A new session sharing ``session``'s messages up to ``at`` (default: the last)."""
        return session.fork(at, name=name)

    def compare(self, prompt: str, models: Sequence[str] | str, *,
                session: Session | str | None = None, **options: Any) -> Comparison:
        """``prompt`` to each model, each in a fork of ``session``; a frame (docs/compare.md)."""
        from .comparison import compare

        return compare(self, prompt, models, session, **options)

    # -- tools -----------------------------------------------------------------------------

    def add_tool(self, tool: Tool | Callable[..., Any]) -> Tool:
        if not isinstance(tool, Tool):
            tool = tool_from_function(tool)
        return self.registry.register(tool)

    def tool(self, fn: Callable[..., Any] | None = None, *, name: str | None = None,
             mutating: bool = False, timeout: float | None = None,
             argument: ArgumentKind | None = None) -> Any:
        """Decorator: register a plain (sync or async) function as a tool.

        Its signature, type hints and docstring become the JSON Schema and description. A
        custom tool is allowed by default; ``mutating=True`` makes the ``build`` agent ask
        before each call and the ``plan`` agent deny it; ``argument="code"`` says it runs what
        it is given (its permission rules are whole-tool or an exact match).
        """

        def register(f: Callable[..., Any]) -> Callable[..., Any]:
            self.add_tool(tool_from_function(f, name=name, mutating=mutating, timeout=timeout,
                                             argument=argument))
            return f

        return register(fn) if fn is not None else register

    # -- long-term memory ------------------------------------------------------------------

    def set_memory(self, memory_dir: str | os.PathLike[str] | None = None, *,
                   enabled: bool = True, embedding_model: str | None = None,
                   keyword_weight: float = 0.3, vector_weight: float = 0.7,
                   half_life_days: float = 7.0) -> LongTermMemory | None:
        """Whether there is long-term memory, where it lives and how it ranks (``%config
        Forge.memory_*`` lands here); nothing is created on disk before its first use. Off:
        no memory tools are offered and compaction writes no log."""
        sig = (enabled, str(memory_path(memory_dir, self.root)), embedding_model, keyword_weight,
               vector_weight, half_life_days, self.litellm_kwargs.get("api_base"))
        if sig != self._memory_sig:
            self.services.memory = LongTermMemory(
                self.store, sig[1], embedding_model=embedding_model,
                litellm_kwargs=self.litellm_kwargs,
                weights=Weights(keyword_weight, vector_weight, half_life_days),
                project=project_of(sig[1], self.root)) if enabled else None
            # the memory tools carry this flag (memory/tools.py): offered only while memory is on
            self.flags = self.flags | {MEMORY_FLAG} if enabled else self.flags - {MEMORY_FLAG}
            self._memory_sig = sig
        return self.memory

    # -- approvals -------------------------------------------------------------------------

    def approve(self, request_id: str, answer: str = "once", reason: str | None = None,
                by: str = "user") -> None:
        """Answer a pending approval: ``once``, ``session`` or ``deny`` (any thread)."""
        self.approvals.answer(request_id, Answer(answer, reason, by))

    def on_approval(self, handler: Callable[[ApprovalRequest], Any], *,
                    fallback: bool = False) -> Callable[[], None]:
        """Register an approval handler (answering at once, or None and ``approve`` later;
        recorded by its name). ``fallback=True``: only where no one can click (nbconvert,
        papermill, a text view). Returns the function that unregisters it."""
        return self.approvals.add_handler(handler, fallback=fallback)

    def answer(self, request_id: str, text: str, by: str = "user") -> None:
        """Answer a pending question of the ``question`` tool (any thread)."""
        self.questions.answer(request_id, text, by)

    def on_question(self, handler: QuestionHandler) -> Callable[[], None]:
        """Register a question handler (the answer at once, or None and ``answer`` later);
        while one is registered the question tool waits. Returns its unregistering function."""
        return self.questions.add_handler(handler)

    # -- models and running ---------------------------------------------------------------

    # Checked on every assignment, %config's and a person's alike (settings_apply.py).
    stream_timeout = checked_setting("stream_timeout")
    max_tokens = checked_setting("max_tokens")
    tool_profile = checked_setting("tool_profile")
    max_age = checked_setting("max_age")

    async def prepare_tools(self, session_id: str) -> None:
        """Before a turn is decided: start the MCP servers that should run and bring their
        tools (and the skills found on disk) into the registry; say what went wrong."""
        if self.skills is not None:
            self.skills.sync(self.registry)
        if self.mcp:
            from .mcp import McpWarning

            scrub = Scrubber.from_environment()  # a server's stderr may quote its own keys
            in_kernel = bool(self.namespace.get("get_ipython"))
            for notice in await self.mcp.prepare(self.registry):
                self.announce(session_id, scrub(notice) or "")
                if not in_kernel:  # a script has no widget to show the notice in
                    warnings.warn(scrub(notice) or "", McpWarning, stacklevel=2)

    def output_dir(self, session_id: str) -> str:
        """The session's folder of full tool outputs, right under ``outputs_root`` (id_path)."""
        return str(id_path(self.outputs_root(), session_id, "session"))

    def outputs_root(self) -> Path:
        """The folder holding every session's saved outputs."""
        if self._output_root is not None:
            return self._output_root
        path = self.store.path  # the store's file, when it has one (store/base.py declares it)
        return Path(path).parent / "outputs" if path else Path.home() / ".forge" / "outputs"

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
        if getattr(self, "mcp", None) is not None:
            self.mcp.close()  # the servers first: none outlives the Forge
        self.flush()
        self.store.close()
        APPLY["tracing"](self, "off")  # last: the turn's final spans leave

    def __enter__(self) -> Forge: return self  # noqa: E704
    def __exit__(self, *exc: object) -> None: self.close()  # noqa: E704


# forge.costs(), forge.sql(...), …: forge.data's, under the same names (HistoryData.FORWARDED)
for _name in HistoryData.FORWARDED:
    setattr(Forge, _name, forwarding(_name))
