"""The notebook's Forge: built from the kernel's configuration, bound to its namespace.

One controller per kernel. ``%load_ext`` costs nothing: the ``forge_jupyter.Forge`` facade is
built by the background warm-up (``warmup.py``) or, failing that, by the first ``%%forge``; it
is rebuilt when the store settings change. The controller remembers each notebook's current
session across kernel restarts (the session records the notebook's path).
"""

from __future__ import annotations

import os
import threading
from typing import Any

from ..config import Forge as ForgeConfig
from ..errors import NotFound
from ..tools.permission import Rule

_STORE_KEYS = ("db", "tenant", "builtin_tools", "max_age")  # a change builds a new Forge


class NotebookForge:
    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.config = ForgeConfig(parent=shell)
        self._forge: Any = None
        self._store_sig: tuple | None = None
        self.current_session_id: str | None = None
        self.pending_tools: list[Any] = []  # registered before the Forge exists
        self.background: dict[str, Any] = {}  # session id → task of a --async run
        self._build_lock = threading.RLock()  # the warm-up thread builds the facade too
        self.closed = False
        self.warmup: Any = None  # a Warmup, started by %load_ext
        self.status: Any = None  # a BusyWhileRunning, in a kernel
        # sessions this kernel has run a %%forge cell in (or chose): a cell there runs after
        # the session's last turn; elsewhere at the start of a history (replay_cell.py)
        self.replay_entered: set[str] = set()

    # -- the facade ------------------------------------------------------------------------

    @property
    def forge(self) -> Any:
        with self._build_lock:
            return self._current_forge()

    def warm(self) -> None:
        """Build the facade now (the warm-up thread): the first cell then finds it ready."""
        with self._build_lock:
            if not self.closed:  # unloaded meanwhile: build nothing
                self._current_forge()

    def close(self) -> None:
        with self._build_lock:
            self.closed = True
            if self._forge is not None:
                self._forge.close()

    def _current_forge(self) -> Any:
        from ..forge import Forge

        kwargs = self.config.forge_kwargs()
        sig = tuple(kwargs.get(k) for k in _STORE_KEYS)
        if self._forge is None or sig != self._store_sig:
            if self._forge is not None:
                self._forge.close()
                self.current_session_id = None
                self.replay_entered.clear()
            self._forge = Forge(namespace=self.shell.user_ns, root=os.getcwd(), **kwargs)
            self._forge.display_available = self.in_kernel
            for tool in self.pending_tools:
                self._forge.add_tool(tool)
            self._store_sig = sig
        else:  # settings that apply to the next prompt without a new store
            f = self._forge
            f.model = kwargs["model"]
            f.default_agent = kwargs["agent"]
            f.permissions = [Rule.parse(r) for r in kwargs["permissions"]]
            f.compaction_ratio, f.char_budget = kwargs["compaction_ratio"], kwargs["char_budget"]
            f.step_limit, f.tool_timeout = kwargs["step_limit"], kwargs["tool_timeout"]
            f.max_tokens, f.tool_profile = kwargs["max_tokens"], kwargs["tool_profile"]
            f.stream_timeout = kwargs["stream_timeout"]
            f.shell_timeout = kwargs["shell_timeout"]
            from ..memory import MEMORY_FLAG

            # %config Forge.flags: the next prompt's tool table (memory keeps its own flag)
            f.flags = frozenset(kwargs["flags"]) | (f.flags & {MEMORY_FLAG})
            f.mcp.configure(kwargs["mcp_servers"])  # %config Forge.mcp_servers: at the next prompt
            for key in ("api_base", "api_key"):
                if key in kwargs:
                    f.litellm_kwargs[key] = kwargs[key]
                else:
                    f.litellm_kwargs.pop(key, None)
            m = self.config.memory_kwargs()  # a new folder or weights: a new LongTermMemory
            f.set_memory(m["memory_dir"], enabled=m["memory_long_term"],
                         embedding_model=m["memory_embedding_model"],
                         keyword_weight=m["memory_keyword_weight"],
                         vector_weight=m["memory_vector_weight"],
                         half_life_days=m["memory_half_life_days"])
        return self._forge

    @property
    def built(self) -> bool:
        return self._forge is not None

    @property
    def in_kernel(self) -> bool:
        return getattr(self.shell, "kernel", None) is not None

    def add_tool(self, tool: Any) -> None:
        self.pending_tools.append(tool)
        if self._forge is not None:
            self._forge.add_tool(tool)

    # -- where a prompt comes from ------------------------------------------------------

    @property
    def notebook_path(self) -> str | None:
        path = self.shell.user_ns.get("__session__") or os.environ.get("JPY_SESSION_NAME")
        # absolute: a relative JPY_SESSION_NAME (nbconvert in CI) names the same notebook as
        # the absolute one JupyterLab gives, so its recorded turns match (replay)
        return os.path.abspath(str(path)) if path else None

    def origin(self) -> dict[str, Any]:
        """Notebook path, cell id and execution count of the cell being run."""
        from .kernel_status import cell_parent

        cell_id = None
        kernel = getattr(self.shell, "kernel", None)
        if kernel is not None:
            parent = cell_parent(kernel)
            if isinstance(parent, dict):
                cell_id = (parent.get("metadata") or {}).get("cellId")
        return {"notebook": self.notebook_path, "cell_id": cell_id,
                "execution_count": getattr(self.shell, "execution_count", None)}

    # -- sessions --------------------------------------------------------------------------

    def session_names(self) -> list[str]:
        store = self.forge.store
        out, cursor = [], None
        while True:
            page = store.list_sessions(cursor=cursor, limit=500)
            out += [s.name or s.id for s in page.items if s.parent_id is None]
            if page.next_cursor is None:
                return out
            cursor = page.next_cursor

    def find(self, name_or_id: str) -> Any:
        from ..session.session import Session

        try:
            return Session(self.forge, self.forge.store.find_session(name_or_id))
        except NotFound:
            from ..frames import short_session_id  # an id as the frames show it: ses_…k3Vq9a

            full = short_session_id(self.forge.store, name_or_id)
            if full is not None:
                return Session(self.forge, self.forge.store.get_session(full))
            names = self.session_names()
            listing = ", ".join(names[-20:]) if names else "none yet"
            raise NotFound(f"no session named or numbered {name_or_id!r}. Sessions: {listing}. "
                           "Create one with %forge new NAME.") from None

    def current(self) -> Any:
        """This notebook's current session: remembered, else the notebook's latest, else new."""
        from ..session.session import Session

        forge = self.forge
        if self.current_session_id is not None:
            try:
                return Session(forge, forge.store.get_session(self.current_session_id))
            except NotFound:
                self.current_session_id = None
        path = self.notebook_path
        if path:
            latest = None
            cursor = None
            while True:
                page = forge.store.list_sessions(cursor=cursor, limit=500)
                for info in page.items:
                    if info.metadata.get("notebook") == path and info.parent_id is None:
                        latest = info
                if page.next_cursor is None:
                    break
                cursor = page.next_cursor
            if latest is not None:
                self.current_session_id = latest.id
                return Session(forge, latest)
        return self.new()

    def new(self, name: str | None = None) -> Any:
        session = self.forge.session(name, new=True, metadata={"notebook": self.notebook_path})
        self.current_session_id = session.id
        self.replay_entered.add(session.id)
        return session

    def use(self, session: Any) -> None:
        self.current_session_id = session.id
        self.replay_entered.add(session.id)
