"""What the session core needs of its owner, as Protocols: the owner (``forge.Forge``) and
the session handle (``session.session.Session``) satisfy them without session/ importing
forge.py — dependencies point one way, from the facade to the core.

The seam is small on purpose: the owner's ``services`` (services.py), the settings a turn is
decided from (``TurnSettings``, declared in settings.py and read when each turn starts), and
the few calls a run makes of its owner.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from ..message import SessionInfo
from ..model_choice import ServedModels
from ..tools.permission import Rule
from .retry import RetryPolicy
from .services import Services

if TYPE_CHECKING:
    from .commands import Commands


class TurnSettings(Protocol):
    """The owner's settings a turn reads (settings.py declares them; ``%config`` and
    ``Forge.configure`` set them, validated, on the owner)."""

    model: str | None
    default_agent: str
    permissions: list[Rule]
    system: str | None
    flags: frozenset[str]
    step_limit: int
    tool_timeout: float
    stream_timeout: float | None
    lean_stream: bool  # an openai/ stream read from its SSE (llm/lean.py)
    max_tokens: int | None
    tool_profile: str
    tool_search_tokens: int  # over this, MCP tools are offered lazily (tools/tool_search.py)
    compaction_ratio: float
    char_budget: int
    image_max_side: int  # the four bounds on images a vision model is sent
    image_max_bytes: int
    images_per_step: int
    images_per_request: int
    retry: RetryPolicy
    litellm_kwargs: dict[str, Any]


class Host(TurnSettings, Protocol):
    """What the session core needs of its owner (``forge.Forge`` is one)."""

    services: Services
    root: str | None  # the file tools' root (None: the working directory)
    display_available: bool  # a notebook front end shows the tools' rich outputs
    served_models: ServedModels  # what a server at api_base lists, asked once (model_choice)
    notices_said: set[tuple[str, str]]  # the model choice's notices said, per session
    shell_timeout: float  # seconds a command of session.shell may run
    commands: Commands  # the prompt templates a session runs by name (commands.py)

    def output_dir(self, session_id: str) -> str: ...
    def announce(self, session_id: str, notice: str) -> None: ...
    def flush(self) -> int: ...
    async def flush_async(self) -> None: ...
    async def prepare_tools(self, session_id: str) -> None: ...
    def session(self, name_or_id: str | None = None, *, new: bool = False,
                **fields: Any) -> Any: ...  # a new child session (the task tool's)


def tool_fields(host: Host) -> dict[str, Any]:
    """The typed fields of a ``ToolContext`` (tools/base.py) a call in ``host``'s run gets."""
    s = host.services
    return {"store": s.store, "namespace": s.namespace, "questions": s.questions,
            "memory": s.memory, "notebook": s.notebook, "editor": s.editor,
            "agents": s.agents, "new_session": host.session, "forge": host}


class SessionHandle(Protocol):
    """The handle a prompt runs in (``session.session.Session`` is one)."""

    forge: Host

    @property
    def id(self) -> str: ...
    @property
    def info(self) -> SessionInfo: ...
    def refresh(self) -> SessionInfo: ...
