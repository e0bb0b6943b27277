"""The services a Forge is composed of, as one typed object the session core can name.

The Forge facade builds one ``Services`` and hands it down: the session core reads it through
``Host.services`` (host.py) and each tool call gets the ones it uses as typed fields of its
``ToolContext`` (tool_call.py) — nobody probes the facade with ``getattr``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..agents import AgentSet
from ..bus import Bus
from ..store.base import Store
from ..store.projection import Projection
from ..tools.base import Tool
from ..tools.registry import ToolRegistry
from .approval import Approvals
from .question import Questions

if TYPE_CHECKING:
    from ..memory import LongTermMemory
    from ..tools.notebook_edit import NotebookEditor
    from ..tools.notebook_read import NotebookReader
    from ..tracing import Tracing


@dataclass
class Services:
    """What a run writes through and reads from; one per Forge, shared by its sessions."""

    store: Store
    projection: Projection  # the store's write buffer: every row of a run goes through it
    bus: Bus  # live events to the widget and the side panel
    approvals: Approvals
    questions: Questions  # the question tool's (question.py)
    registry: ToolRegistry
    agents: AgentSet
    plugins: Any  # pluggy.PluginManager (tools/plugins.py)
    # session id → the MCP tools its model loaded with tool_search (tools/tool_search.py)
    loaded_tools: dict[str, set[str]] = field(default_factory=dict)
    builtins: dict[str, Tool] = field(default_factory=dict)  # what the lean profile may shorten
    # Long-term memory while it is on (Forge.set_memory replaces it), else None.
    memory: LongTermMemory | None = None
    # OpenTelemetry spans while the tracing setting is on (settings_apply.py), else None.
    tracer: Tracing | None = None
    # The notebook's own variables in a kernel; a private namespace otherwise.
    namespace: dict[str, Any] = field(default_factory=dict)
    # The notebook around the kernel (notebook/cells/, set by the notebook's controller).
    notebook: NotebookReader | None = None
    editor: NotebookEditor | None = None  # its cells, changed through the page (the cell tools)
