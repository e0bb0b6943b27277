"""The Forge facade: configuration + store + tool registry + sessions, in one object.

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

from .bus import Bus, SessionStatus
from .errors import NotFound
from .model import Event, SessionInfo
from .models import ModelChoice, resolve
from .session.context import RunConfig
from .session.retry import RetryPolicy
from .session.session import Session
from .store.base import Store
from .store.memory import MemoryStore
from .store.projection import Projection
from .tools.base import Tool, tool_from_function
from .tools.registry import ToolRegistry

DEFAULT_SYSTEM = """\
You are Forge, an assistant working inside a live Jupyter notebook kernel. The person \
works in the same kernel: their variables, DataFrames and files are real, and your tools act \
on them directly. Be concise; prefer showing results over describing them."""


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
        system: str | None = None,
        tools: Iterable[Tool | Callable[..., Any]] = (),
        step_limit: int = 25,
        tool_timeout: float = 300.0,
        retry: RetryPolicy | None = None,
        namespace: dict[str, Any] | None = None,
        **litellm_kwargs: Any,
    ) -> None:
        self.store = open_store(db, tenant=tenant)
        self.model = model
        self.default_agent = agent
        self.system = system or DEFAULT_SYSTEM
        self.step_limit = step_limit
        self.tool_timeout = tool_timeout
        self.retry = retry or RetryPolicy()
        self.litellm_kwargs = litellm_kwargs
        self.namespace: dict[str, Any] = namespace if namespace is not None else {}
        self.bus = Bus()
        self.projection = Projection(self.store)
        self.registry = ToolRegistry()
        for t in tools:
            self.add_tool(t)

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
        info = SessionInfo(name=name_or_id, model=fields.pop("model", None),
                           agent=fields.pop("agent", self.default_agent),
                           directory=str(fields.pop("directory", os.getcwd())), **fields)
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
        """Decorator: register a plain (sync or async) function as a tool."""

        def register(f: Callable[..., Any]) -> Callable[..., Any]:
            self.add_tool(tool_from_function(f, name=name, mutating=mutating, timeout=timeout))
            return f

        return register(fn) if fn is not None else register

    def tools_for_turn(self, agent: str, toggles: dict[str, bool]) -> dict[str, Tool]:
        disabled = {name for name, on in toggles.items() if not on}
        return self.registry.resolve(disabled=disabled)

    def permission_gate(self, session: Session, agent: str) -> Any:
        return None

    def system_prompt(self, agent: str, tools: dict[str, Tool]) -> str:
        return self.system

    # -- models and running ---------------------------------------------------------------

    def choose_model(self, prompt_model: str | None, session_model: str | None) -> ModelChoice:
        return resolve((prompt_model, "prompt"), (session_model, "session"), (self.model, "config"))

    def run_config(self) -> RunConfig:
        return RunConfig(step_limit=self.step_limit, tool_timeout=self.tool_timeout, retry=self.retry)

    def announce(self, session_id: str, notice: str) -> None:
        """Tell the person something about the run (shown by the widget; logged as an event)."""
        self.bus.publish(SessionStatus(session_id, "notice", {"message": notice}))
        self.projection.put_event(Event(session_id=session_id, type="notice", data={"message": notice}))

    # -- persistence -----------------------------------------------------------------------

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
