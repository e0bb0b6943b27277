"""Long-term memory, one object: the folder, its index in the store, embeddings, settings.

``Forge.memory`` is one. Nothing touches the disk before first use: the folder and its
MEMORY.md are created by the first search, read or log entry. Each search first brings the
index up to date (only changed files are read again, sync.py), then ranks (search.py).
"""

from __future__ import annotations

import datetime as dt
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..message import Message
from ..scrub import valid_text
from ..store.base import Store
from ..store.sql.memory_index import MemoryIndex
from .embed import Embedder
from .flush import log_entry
from .folder import DEFAULT_DIR, MemoryFolder
from .search import SearchResult, Weights, hybrid_search
from .sync import SyncReport, sync


def memory_path(memory_dir: str | os.PathLike[str] | None, base: str | os.PathLike[str] | None) -> Path:
    """The memory folder: ``memory_dir`` (else ``$FORGE_MEMORY_DIR``; a relative one against
    ``base``), else ``.forge/memory`` in ``base`` — the notebook's folder — or the working
    directory."""
    where = Path(base) if base else Path.cwd()
    if memory_dir is None or str(memory_dir).strip() == "":
        memory_dir = os.environ.get("FORGE_MEMORY_DIR")
    if memory_dir is None or str(memory_dir).strip() == "":
        return where / DEFAULT_DIR
    path = Path(memory_dir).expanduser()
    return path if path.is_absolute() else where / path


def project_of(path: str | os.PathLike[str], base: str | os.PathLike[str] | None) -> Path | None:
    """The project folder whose own ``.forge/memory`` ``path`` is (``memory_path``'s default),
    else None: a folder the person named elsewhere is theirs, links and all."""
    where = Path(base) if base else Path.cwd()
    return where if Path(path) == where / DEFAULT_DIR else None


MAX_QUERY_CHARS = 2_000


class LongTermMemory:
    """Search, read and write one memory folder; its index lives in ``store``."""

    def __init__(self, store: Store, path: str | os.PathLike[str], *,
                 embedding_model: str | None = None,
                 litellm_kwargs: dict[str, Any] | None = None,
                 weights: Weights | None = None,
                 project: str | os.PathLike[str] | None = None) -> None:
        self.folder = MemoryFolder(path, project)
        self.index = MemoryIndex(store, str(self.folder.path))
        self.embedder = Embedder(embedding_model, litellm_kwargs or {})
        self.weights = weights or Weights()
        self._sync_lock = threading.Lock()
        self.last_sync: SyncReport | None = None

    def __repr__(self) -> str:
        return f"LongTermMemory({str(self.folder.path)!r})"

    @property
    def path(self) -> Path:
        return self.folder.path

    def sync(self) -> SyncReport:
        """Bring the index in step with the folder (created on first use)."""
        self.folder.ensure()
        # the store is not held across the sync: embedding calls may take seconds, and other
        # kernels writing to a DuckDB file would wait that long
        with self._sync_lock:
            self.last_sync = sync(self.folder, self.index, self.embedder)
        return self.last_sync

    def search(self, query: str, k: int = 5, *, today: dt.date | None = None) -> SearchResult:
        if not isinstance(query, str) or not query.strip():
            raise ValueError("memory search needs a query: a few words of what to find")
        query = valid_text(query)[:MAX_QUERY_CHARS]  # untrusted: bounded, valid Unicode
        report = self.sync()
        return hybrid_search(self.index, query, k, self.embedder, self.weights, today=today,
                             note=report.embedding_note)

    def read(self, path: str) -> str:
        """A memory file's text (valid Unicode, its first MAX_FILE_BYTES)."""
        self.folder.ensure()
        return self.folder.text(path)[0]

    def flush(self, messages: Sequence[Message], *, session: str, at: dt.datetime | None = None,
              scrub: Callable[[str | None], str | None] | None = None) -> str | None:
        """Append what a compaction summarized to the day's log (``scrub``: secrets out, once
        more); the log's name, or None when there was nothing to keep."""
        at = at or dt.datetime.now().astimezone()
        entry = log_entry(messages, session=session, at=at)
        if entry is None:
            return None
        return self.folder.append_log((scrub(entry) if scrub else entry) or "", at.date())
