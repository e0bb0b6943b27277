"""What the session core needs of its owner, as Protocols: the owner (``forge.Forge``) and
the session handle (``session.session.Session``) satisfy them without session/ importing
forge.py — dependencies point one way, from the facade to the core.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..agents import AgentSet
from ..bus import Bus
from ..model import SessionInfo
from ..model_choice import ServedModels
from ..store.base import Store
from ..store.projection import Projection
from ..tools.base import Tool
from ..tools.permission import Rule
from ..tools.registry import ToolRegistry
from .approval import Approvals
from .question import Questions
from .retry import RetryPolicy


class Host(Protocol):
    """What the session core needs of its owner (``forge.Forge`` is one): the services a run
    writes through, and the settings a turn is decided from (read when each turn starts)."""

    store: Store
    projection: Projection
    bus: Bus
    approvals: Approvals
    questions: Questions
    registry: ToolRegistry
    builtins: dict[str, Tool]  # the builtin tools: what the lean profile may shorten or drop
    agents: AgentSet
    plugins: Any  # pluggy.PluginManager (tools/plugins.py)
    default_agent: str
    root: str | None  # the file tools' root (None: the working directory)
    model: str | None
    permissions: list[Rule]
    system: str | None
    flags: frozenset[str]
    namespace: dict[str, Any]
    step_limit: int
    tool_timeout: float
    retry: RetryPolicy
    stream_timeout: float | None
    max_tokens: int | None
    tool_profile: str
    compaction_ratio: float
    char_budget: int
    litellm_kwargs: dict[str, Any]
    served_models: ServedModels  # what a server at api_base lists, asked once (model_choice)
    notices_said: set[tuple[str, str]]  # the model choice's notices said, per session
    display_available: bool

    def output_dir(self, session_id: str) -> str: ...
    def announce(self, session_id: str, notice: str) -> None: ...
    def flush(self) -> int: ...
    async def flush_async(self) -> None: ...


class SessionHandle(Protocol):
    """The handle a prompt runs in (``session.session.Session`` is one)."""

    forge: Host

    @property
    def id(self) -> str: ...
    @property
    def info(self) -> SessionInfo: ...
    def refresh(self) -> SessionInfo: ...
