"""History as data: one object, ``Forge.data``, holding the Forge's DataFrames and SQL over the
store's views (frames.py, store/views.py), export and import (export.py), copy (copy.py) and
retention (retention.py) — DESIGN §8.

Each method is the public face (signature, docstring) of one function of those modules; it
flushes buffered rows first, so a read sees everything written so far. The Forge keeps the
documented spellings (``forge.costs()``, ``forge.sql(...)``, …) as thin methods made from
``HistoryData.FORWARDED``, and ``forge_jupyter.costs()`` forwards the same names to the
notebook's Forge. Frames are pandas DataFrames and ages datetime.timedelta — annotated Any
here, as this module imports neither (pandas loads only when a frame is asked for).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import InvalidOption

# Only the standard library and errors.py at import: ``forge_jupyter.__getattr__`` reads
# FORWARDED from here, and ``import forge_jupyter`` stays fast.
if TYPE_CHECKING:
    import pandas as pd

    from .forge import Forge
    from .imported import Importer
    from .session.session import Session
    from .store.base import Store


class HistoryData:
    """The history of one Forge's store as DataFrames, SQL and files (``forge.data``)."""

    # What the Forge (and ``forge_jupyter``, for the notebook's Forge) offers under the same
    # name: the one list of the documented spellings.
    FORWARDED: tuple[str, ...] = (
        "sessions", "messages", "parts", "tool_calls", "costs", "compactions", "context",
        "turns", "history", "events", "sql", "importer", "export_session", "import_session",
        "export_notebook_turns", "import_notebook_turns", "copy_to", "export_parquet",
        "delete_session", "cleanup", "cleanup_at_startup", "memory_search",
    )

    def __init__(self, forge: Forge) -> None:
        self._forge = forge

    def __repr__(self) -> str:
        return f"<history of {self._forge.store!r}>"

    def _store(self) -> Store:
        """The store, once every buffered row is committed."""
        self._forge.flush()
        return self._forge.store

    def sessions(self, *, since: Any = None, until: Any = None) -> Any:
        """Live sessions with their step, token and cost totals (a DataFrame)."""
        from . import frames

        return frames.sessions(self._store(), since=since, until=until)

    def messages(self, session: Any = None, *, role: Any = None, model: Any = None,
                 since: Any = None, until: Any = None) -> Any:
        """Message bodies (of a session: those it wrote), oldest first (a DataFrame)."""
        from . import frames

        return frames.messages(self._store(), session, role=role, model=model, since=since,
                               until=until)

    def parts(self, session: Any = None, type: Any = None, *, since: Any = None,
              until: Any = None) -> Any:
        """Parts, optionally of one or more types, in id order (a DataFrame)."""
        from . import frames

        return frames.parts(self._store(), session, type, since=since, until=until)

    def tool_calls(self, session: Any = None, tool: Any = None, state: Any = None, *,
                   model: Any = None, since: Any = None, until: Any = None) -> Any:
        """Tool calls: state, duration, input/output size, error (a DataFrame)."""
        from . import frames

        return frames.tool_calls(self._store(), session, tool, state, model=model,
                                 since=since, until=until)

    def costs(self, by: str | Iterable[str] = "session", *, session: Any = None,
              model: Any = None, since: Any = None, until: Any = None) -> Any:
        """Tokens and cost by session, day, model, agent or cell (a DataFrame)."""
        from . import frames

        return frames.costs(self._store(), by if isinstance(by, str) else list(by),
                            session=session, model=model, since=since, until=until)

    def compactions(self, session: Any = None, *, since: Any = None, until: Any = None) -> Any:
        """Compactions: when, reason, auto, tokens before/after (a DataFrame)."""
        from . import frames

        return frames.compactions(self._store(), session, since=since, until=until)

    def context(self, session: Any = None, *, since: Any = None, until: Any = None) -> Any:
        """Per model call: the tokens sent and the compaction boundary in force (a DataFrame)."""
        from . import frames

        return frames.context(self._store(), session, since=since, until=until)

    def turns(self, session: Any = None, *, since: Any = None, until: Any = None) -> Any:
        """Per user message: the prompt, its cell, what answering it took (a DataFrame)."""
        from . import frames

        return frames.turns(self._store(), session, since=since, until=until)

    def history(self, session: Any, include_superseded: bool = False) -> Any:
        """The session's timeline with ``visible_to_model`` (a DataFrame); messages a
        compaction superseded only with ``include_superseded=True``."""
        from . import frames

        return frames.history(self._store(), session, include_superseded)

    def events(self, session: Any = None, type: Any = None, *, since: Any = None,
               until: Any = None) -> Any:
        """Events: compactions, forks, permissions, aborts, deletions, … (a DataFrame)."""
        from . import frames

        return frames.events(self._store(), session, type, since=since, until=until)

    def sql(self, query: str, params: Any = None) -> Any:
        """One read-only SELECT over this tenant's tables and views (docs/schema.md)."""
        from . import frames

        return frames.sql(self._store(), query, params)

    def importer(self) -> Importer:
        """Where an imported session lands here: this Forge's root (else the working
        directory) and its default agent — never what the file says (imported.py)."""
        from .imported import Importer

        return Importer(root=self._forge.root or os.getcwd(), agent=self._forge.default_agent)

    def export_session(self, session: Any, path: str | os.PathLike[str]) -> Path:
        """Write a session to JSON (atomic, secrets scrubbed, orphaned calls closed)."""
        from . import export, frames

        store = self._store()
        return export.export_session(store, frames.session_id(store, session), path,
                                     outputs=self._forge.output_dir)

    def import_session(self, path: str | os.PathLike[str], *, name: str | None = None,
                       new_ids: bool = False) -> Session:
        """Import an exported session, all or nothing; never overwrites (see export.py)."""
        from . import export
        from .session.session import Session

        return Session(self._forge, export.import_session(
            self._forge.store, path, self.importer(), name=name, new_ids=new_ids,
            outputs=self._forge.output_dir))

    def export_notebook_turns(self, notebook: str | os.PathLike[str],
                              path: str | os.PathLike[str]) -> Path:
        """Write the turns recorded in ``notebook`` to JSON, so a colleague's Run All (or CI,
        without a key) replays them (replay_export.py)."""
        from .replay_export import export_notebook_turns

        self._forge.flush()
        return export_notebook_turns(self._forge.store, notebook, path,
                                     outputs=self._forge.output_dir)

    def import_notebook_turns(self, path: str | os.PathLike[str],
                              notebook: str | os.PathLike[str]) -> Any:  # TurnsImport
        """Import exported turns as recorded in ``notebook`` (its path here); what the store
        already holds is skipped, never overwritten."""
        from .replay_export import import_notebook_turns

        self._forge.flush()
        return import_notebook_turns(self._forge.store, path, notebook, self.importer(),
                                     outputs=self._forge.output_dir)

    def copy_to(self, dst: str | os.PathLike[str] | Store, sessions: Iterable[Any] | None = None, *,
                tenant: str | None = None) -> Any:  # copy.CopyReport
        """Copy sessions (all live ones, or these: ids, names or Sessions) into another store —
        a DuckDB path, a postgresql:// DSN or a Store — verified row for row; never overwrites
        (see copy.py). ``tenant``: the destination's (default: this Forge's)."""
        from .copy import copy_sessions, destination
        from .store.base import Store

        if isinstance(dst, Store) and tenant not in (None, dst.tenant_id):
            raise ValueError(f"copy_to: the destination store is tenant {dst.tenant_id!r}'s; "
                             f"tenant={tenant!r} applies to a path or URL only")
        self._forge.flush()
        wanted = None if sessions is None else [getattr(s, "id", s) for s in sessions]
        own = self._forge.store.tenant_id
        opened = lambda: self._forge._open_store(dst, tenant=tenant or own)  # noqa: E731
        with destination(dst, opened) as target:
            return copy_sessions(self._forge.store, target, wanted)

    def export_parquet(self, view: str, path: str | os.PathLike[str]) -> Path:
        """Write one of the views (docs/schema.md) to a Parquet file, atomically."""
        from . import export

        self._forge.flush()
        return export.export_parquet(self._forge.store, view, path)

    def delete_session(self, session: Any) -> None:
        """Delete a session (not while it runs), its bodies no fork shares, and its saved
        outputs; recorded as a ``session.deleted`` event."""
        from . import frames, retention

        sid = frames.session_id(self._store(), session)
        assert sid is not None
        retention.delete_session(self._forge.store, sid, outputs=self._forge.outputs_root())

    def cleanup(self, max_age: Any = None, *,
                trigger: str = "on demand") -> list[str]:
        """Delete the sessions idle longer than ``max_age`` (default: the configured one);
        returns their ids; recorded as events."""
        from . import retention

        age = retention.parse_max_age(max_age) if max_age is not None else self._forge.max_age
        if age is None:
            raise ValueError("cleanup() needs a max_age (a timedelta or e.g. '30d'), given here "
                             "or configured as Forge(max_age=…)")
        self._forge.flush()
        return retention.cleanup(self._forge.store, age, trigger=trigger,
                                 outputs=self._forge.outputs_root())

    def cleanup_at_startup(self) -> list[str]:
        """What ``Forge()`` runs last: ``cleanup()`` when ``max_age`` is set, else nothing."""
        return self.cleanup(trigger="startup") if self._forge.max_age is not None else []

    def memory_search(self, query: str, k: int = 5) -> pd.DataFrame:
        """The ``k`` best snippets of long-term memory for ``query``: file, start_line,
        end_line, score, snippet (``.attrs["note"]`` says why, when it was keyword-only)."""
        from .memory.frame import hits_frame

        memory = self._forge.memory
        if memory is None:
            raise InvalidOption("Long-term memory is off (Forge.memory_long_term = False / "
                                "FORGE_MEMORY_LONG_TERM=false); turn it on to search it.")
        return hits_frame(memory.search(query, k))


def forwarding(name: str) -> Callable[..., Any]:
    """The Forge's method ``name``: ``HistoryData.name`` on ``forge.data`` (its signature and
    docstring, so ``help(forge.costs)`` reads as before)."""
    method = getattr(HistoryData, name)  # once, when the Forge class is made

    @functools.wraps(method)
    def forwarded(forge: Forge, *args: Any, **kwargs: Any) -> Any:
        return method(forge.data, *args, **kwargs)

    return forwarded
