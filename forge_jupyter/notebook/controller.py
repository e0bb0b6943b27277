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
from ..settings import FORGE_SETTINGS

# a change of these builds a new Forge (a new store); the others apply at the next prompt
_STORE_KEYS = tuple(s.name for s in FORGE_SETTINGS if s.rebuilds)


class NotebookForge:
    revert_note: str | None = None  # said once, with the next prompt

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
        # sessions the person chose here (%forge use / fork, %%forge -s): never set aside
        self.chosen: set[str] = set()
        from .cells.run_log import RunLog  # light: %load_ext imports nothing heavy

        self.run_log = RunLog(shell)  # what ran here (installed by %load_ext in a kernel)
        self._saved_index: Any = None  # the saved file's cell ids (cells/note.py), on first use
        self._finder: Any = None  # a headless run's notebook, found by its cells (cells/finder.py)
        self._found: tuple[Any, Any] | None = None  # (the run it was found for, what was found)

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
            self._forge.services.notebook = self.cell_reader()
            if self.in_kernel:  # the cell tools reach the page over the panel's comm
                from .cells.edit import CellEditor
                self._forge.services.editor = CellEditor(
                    lambda: bool(self.config.cell_auto_accept), self.shell,
                    lambda: self.config.cell_run_wait)
            for tool in self.pending_tools:
                self._forge.add_tool(tool)
            self._store_sig = sig
        else:  # settings that apply to the next prompt without a new store
            f = self._forge
            api_key = kwargs.pop("api_key", None)
            f.configure(kwargs)  # every declared setting, so none is forgotten after %config
            if api_key:
                f.litellm_kwargs["api_key"] = api_key
            else:
                f.litellm_kwargs.pop("api_key", None)
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
        if not path:  # nbclient, nbconvert, papermill: the notebook found by its cells
            found = self.found_notebook()
            path = found.path if found is not None else None
        # absolute: a relative JPY_SESSION_NAME (nbconvert in CI) names the same notebook as
        # the absolute one JupyterLab gives, so its recorded turns match (replay)
        return os.path.abspath(str(path)) if path else None

    def found_notebook(self) -> Any:
        """A headless kernel's notebook, found in its folder by the cell running now and the
        ones before it (cells/finder.py), once per cell; None where the front end says which
        cell runs (JupyterLab) or nothing runs."""
        running = self.run_log.current()
        if not self.in_kernel or running is None or running.cell_id or not running.source:
            return None
        if self._found is not None and self._found[0] is running:
            return self._found[1]
        from .cells.finder import NotebookFinder

        self._finder = self._finder or NotebookFinder()
        earlier = [r.source for r in self.run_log.before(running)]
        found = self._finder.find(os.getcwd(), running.source, earlier)
        self._found = (running, found)
        return found

    def cell_reader(self) -> Any:
        """What notebook_read reads through (notebook/cells/reader.py)."""
        from .cells.live import live_cells
        from .cells.reader import CellReader

        return CellReader(self.shell.user_ns, self.run_log, lambda: self.notebook_path,
                          live_cells if self.in_kernel else None)

    def context_note(self, origin: dict[str, Any]) -> str | None:
        """The note this prompt carries (cells/note.py), None when the setting is off or no
        notebook is there (a terminal); the next one then counts runs from this cell on."""
        from ..scrub import Scrubber
        from .cells.note import SavedIndex, context_note

        note = None
        # Only in a notebook's kernel: terminal IPython and `ipython script.ipy` have no
        # notebook around them to describe.
        if self.config.notebook_context and self.in_kernel:
            self._saved_index = self._saved_index or SavedIndex()
            note = context_note(self.notebook_path, origin, self.run_log, self._saved_index,
                                Scrubber.from_environment())
        running = self.run_log.current()
        count = running.execution_count if running is not None else origin.get("execution_count")
        if isinstance(count, int):
            self.run_log.last_turn_count = count
        # a code-only revert (notebook/revert.py): the model's turns stay, their changes did not
        reverted, self.revert_note = self.revert_note, None
        return "\n\n".join(n for n in (note, reverted) if n) or None

    async def attachments(self, session: Any, mentions: Any) -> list[str]:
        """What ``mentions`` point at, as the prompt's attachments (mentions/resolve.py);
        a MentionError when one points at nothing."""
        from ..scrub import Scrubber, secret_params
        from .mentions.resolve import Sources, file_reader, resolve

        forge = self.forge
        sources = Sources(self.shell.user_ns, forge.services.notebook, self.run_log,
                          file_reader(forge.store, session.info.directory, session.id),
                          Scrubber.from_environment(extra=secret_params(forge.litellm_kwargs)))
        return [a.text for a in await resolve(mentions, sources)]

    def origin(self) -> dict[str, Any]:
        """Notebook path, cell id and execution count of the cell being run."""
        from .kernel_status import cell_parent

        cell_id = None
        kernel = getattr(self.shell, "kernel", None)
        if kernel is not None:
            parent = cell_parent(kernel)
            if isinstance(parent, dict):
                cell_id = (parent.get("metadata") or {}).get("cellId")
        if cell_id is None:  # headless: the id the found notebook gives the cell
            found = self.found_notebook()
            cell_id = found.cell_id if found is not None else None
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

    def new(self, name: str | None = None, **metadata: Any) -> Any:
        session = self.forge.session(name, new=True,
                                     metadata={"notebook": self.notebook_path, **metadata})
        self.current_session_id = session.id
        self.replay_entered.add(session.id)
        return session

    def use(self, session: Any) -> None:
        self.current_session_id = session.id
        self.replay_entered.add(session.id)
        self.chosen.add(session.id)

    def set_aside_if_poisoned(self, session: Any) -> tuple[Any, Any]:
        """(the session a live ``%%forge`` runs in, the ``Poisoned`` verdict or None): the
        current one, or a fresh current one when it sat idle after repeated tool failures
        (session/poisoned.py). A session the person chose, or one running here, is kept."""
        from ..message import Event
        from ..session.poisoned import poisoned, session_max_age

        max_age = session_max_age(self.config.session_max_age)
        if max_age is None or session.id in self.chosen or session.id in self.background:
            return session, None
        forge = self.forge
        forge.flush()  # rows still buffered belong to the verdict
        verdict = poisoned(forge.store, session.id, max_age)
        if verdict is None:
            return session, None
        fresh = self.new(set_aside=session.id)
        forge.projection.put_event(Event(session_id=session.id, type="session.set_aside",
                                         data={**verdict.mark(), "by": fresh.id}))
        return fresh, verdict

    def set_aside_notice(self, verdict: Any, fresh: Any) -> str:
        from ..session.poisoned import notice

        return notice(verdict, fresh.id, self.config.session_max_age)
