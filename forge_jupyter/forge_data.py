"""History as data, the Forge's side: DataFrames and SQL over the store's views (frames.py,
store/views.py), export and import (export.py), retention (retention.py) — DESIGN §8.

A mixin of ``Forge``: each method is the public face (signature, docstring) of one function
of those modules, called through ``_read``, which flushes buffered rows first so a read sees
everything written so far. Frames are pandas DataFrames and ages datetime.timedelta —
annotated Any here, as this module imports neither (pandas loads only when a frame is asked
for).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import InvalidOption
from .imported import Importer
from .session.session import Session
from .store.base import Store

if TYPE_CHECKING:
    import pandas as pd


class HistoryAsData:
    store: Store
    flush: Callable[[], int]
    _open_store: Callable[..., Store]  # forge.open_store
    output_dir: Callable[[str], str]
    outputs_root: Callable[[], Path]
    root: str | None
    default_agent: str

    def _read(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """``frames.<name>(store, *args, **kwargs)`` once every buffered row is committed."""
        from . import frames

        self.flush()
        return getattr(frames, name)(self.store, *args, **kwargs)

    def sessions(self, *, since: Any = None, until: Any = None) -> Any:
        """Live sessions with their step, token and cost totals (a DataFrame)."""
        return self._read("sessions", since=since, until=until)

    def messages(self, session: Any = None, *, role: Any = None, model: Any = None,
                 since: Any = None, until: Any = None) -> Any:
        """Message bodies (of a session: those it wrote), oldest first (a DataFrame)."""
        return self._read("messages", session, role=role, model=model, since=since, until=until)

    def parts(self, session: Any = None, type: Any = None, *, since: Any = None,
              until: Any = None) -> Any:
        """Parts, optionally of one or more types, in id order (a DataFrame)."""
        return self._read("parts", session, type, since=since, until=until)

    def tool_calls(self, session: Any = None, tool: Any = None, state: Any = None, *,
                   model: Any = None, since: Any = None, until: Any = None) -> Any:
        """Tool calls: state, duration, input/output size, error (a DataFrame)."""
        return self._read("tool_calls", session, tool, state, model=model, since=since,
                          until=until)

    def costs(self, by: str | Iterable[str] = "session", *, session: Any = None,
              model: Any = None, since: Any = None, until: Any = None) -> Any:
        """Tokens and cost by session, day, model, agent or cell (a DataFrame)."""
        return self._read("costs", by if isinstance(by, str) else list(by), session=session,
                          model=model, since=since, until=until)

    def compactions(self, session: Any = None, *, since: Any = None, until: Any = None) -> Any:
        """Compactions: when, reason, auto, tokens before/after (a DataFrame)."""
        return self._read("compactions", session, since=since, until=until)

    def context(self, session: Any = None, *, since: Any = None, until: Any = None) -> Any:
        """Per model call: the tokens sent and the compaction boundary in force (a DataFrame)."""
        return self._read("context", session, since=since, until=until)

    def turns(self, session: Any = None, *, since: Any = None, until: Any = None) -> Any:
        """Per user message: the prompt, its cell, what answering it took (a DataFrame)."""
        return self._read("turns", session, since=since, until=until)

    def history(self, session: Any, include_superseded: bool = False) -> Any:
        """The session's timeline with ``visible_to_model`` (a DataFrame); messages a
        compaction superseded only with ``include_superseded=True``."""
        return self._read("history", session, include_superseded)

    def events(self, session: Any = None, type: Any = None, *, since: Any = None,
               until: Any = None) -> Any:
        """Events: compactions, forks, permissions, aborts, deletions, … (a DataFrame)."""
        return self._read("events", session, type, since=since, until=until)

    def sql(self, query: str, params: Any = None) -> Any:
        """One read-only SELECT over this tenant's tables and views (docs/schema.md)."""
        return self._read("sql", query, params)

    def importer(self) -> Importer:
        """Where an imported session lands here: this Forge's root (else the working
        directory) and its default agent — never what the file says (imported.py)."""
        return Importer(root=self.root or os.getcwd(), agent=self.default_agent)

    def export_session(self, session: Any, path: str | os.PathLike[str]) -> Path:
        """Write a session to JSON (atomic, secrets scrubbed, orphaned calls closed)."""
        from . import export

        return export.export_session(self.store, self._read("session_id", session), path)

    def import_session(self, path: str | os.PathLike[str], *, name: str | None = None,
                       new_ids: bool = False) -> Session:
        """Import an exported session, all or nothing; never overwrites (see export.py)."""
        from . import export

        return Session(self, export.import_session(  # type: ignore[arg-type]
            self.store, path, self.importer(), name=name, new_ids=new_ids))

    def export_notebook_turns(self, notebook: str | os.PathLike[str],
                              path: str | os.PathLike[str]) -> Path:
        """Write the turns recorded in ``notebook`` to JSON, so a colleague's Run All (or CI,
        without a key) replays them (replay_export.py)."""
        from .replay_export import export_notebook_turns

        self.flush()
        return export_notebook_turns(self.store, notebook, path)

    def import_notebook_turns(self, path: str | os.PathLike[str],
                              notebook: str | os.PathLike[str]) -> Any:  # TurnsImport
        """Import exported turns as recorded in ``notebook`` (its path here); what the store
        already holds is skipped, never overwritten."""
        from .replay_export import import_notebook_turns

        self.flush()
        return import_notebook_turns(self.store, path, notebook, self.importer())

    def copy_to(self, dst: str | os.PathLike[str] | Store, sessions: Iterable[Any] | None = None, *,
                tenant: str | None = None) -> Any:  # copy.CopyReport
        """Copy sessions (all live ones, or these: ids, names or Sessions) into another store —
        a DuckDB path, a postgresql:// DSN or a Store — verified row for row; never overwrites
        (see copy.py). ``tenant``: the destination's (default: this Forge's)."""
        from .copy import copy_sessions, destination

        if isinstance(dst, Store) and tenant not in (None, dst.tenant_id):
            raise ValueError(f"copy_to: the destination store is tenant {dst.tenant_id!r}'s; "
                             f"tenant={tenant!r} applies to a path or URL only")
        self.flush()
        wanted = None if sessions is None else [getattr(s, "id", s) for s in sessions]
        opened = lambda: self._open_store(dst, tenant=tenant or self.store.tenant_id)  # noqa: E731
        with destination(dst, opened) as target:
            return copy_sessions(self.store, target, wanted)

    def export_parquet(self, view: str, path: str | os.PathLike[str]) -> Path:
        """Write one of the views (docs/schema.md) to a Parquet file, atomically."""
        from . import export

        self.flush()
        return export.export_parquet(self.store, view, path)

    # -- retention ---------------------------------------------------------------------------

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
        from . import retention

        sid = self._read("session_id", session)
        assert sid is not None
        retention.delete_session(self.store, sid, outputs=self.outputs_root())

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
        return retention.cleanup(self.store, age, trigger=trigger,
                                 outputs=self.outputs_root())

    def cleanup_at_startup(self) -> list[str]:
        """What ``__init__`` runs last: ``cleanup()`` when ``max_age`` is set, else nothing."""
        return self.cleanup(trigger="startup") if self.max_age is not None else []

    def memory_search(self, query: str, k: int = 5) -> pd.DataFrame:
        """The ``k`` best snippets of long-term memory for ``query``: file, start_line,
        end_line, score, snippet (``.attrs["note"]`` says why, when it was keyword-only)."""
        from .memory.frame import hits_frame

        if self.memory is None:
            raise InvalidOption("Long-term memory is off (Forge.memory_long_term = False / "
                                "FORGE_MEMORY_LONG_TERM=false); turn it on to search it.")
        return hits_frame(self.memory.search(query, k))
