"""Keeping the index in step with the folder: only files that changed are indexed again.

A file whose size and modification time are what the index saw is left alone (one ``stat``);
one whose time changed but whose bytes did not (same SHA-256) only has its time updated; any
other is chunked, counted and embedded again, its old rows replaced in one transaction. Files
gone from the folder leave the index. Chunks without a vector from the current embedding model
(indexed while it failed, or by another model) get one when it answers again.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass, field

from ..errors import DuplicateId, ToolError
from ..store.sql.memory_index import ChunkRow, FileState, MemoryIndex
from .chunks import chunk_markdown, term_counts
from .embed import Embedder, EmbeddingUnavailable
from .folder import MemoryFolder, log_date

BACKFILL = 256  # chunks embedded after a sync, at most, per sync
GROUP = 32  # changed files embedded and written together


@dataclass
class SyncReport:
    """What one sync did: the files (re)indexed, removed, left alone, and left out (why)."""

    indexed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    embedded: int = 0  # chunks given a vector
    embedding_note: str | None = None  # why vectors are missing, when they are


def chunk_id() -> str:
    return "mch_" + secrets.token_hex(10)


def sync(folder: MemoryFolder, index: MemoryIndex, embedder: Embedder | None) -> SyncReport:
    report = SyncReport()
    known = index.files()
    files, report.skipped = folder.files()
    present = set()
    pending: list[_Changed] = []
    for info in files:
        present.add(info.path)
        seen = known.get(info.path)
        if seen is not None and (seen.size, seen.mtime_ns) == (info.size, info.mtime_ns):
            report.unchanged += 1
            continue
        try:
            text, cut = folder.text(info.path)
            data = text.encode("utf-8")
        except (ToolError, OSError) as exc:  # vanished, replaced by a link, binary: left out
            report.skipped.append((info.path, str(exc)))
            if seen is not None:
                index.drop(info.path)
                report.removed.append(info.path)
            continue
        if cut:
            report.skipped.append((info.path, "only its first 1 MB is indexed"))
        state = FileState(info.size, info.mtime_ns, hashlib.sha256(data).hexdigest())
        if seen is not None and seen.sha256 == state.sha256:
            index.touch(info.path, state)
            report.unchanged += 1
            continue
        rows = [ChunkRow(chunk_id(), c.start_line, c.end_line, c.text, term_counts(c.text))
                for c in chunk_markdown(text)]
        pending.append(_Changed(info.path, state, rows))
        if len(pending) >= GROUP:
            _write(index, pending, embedder, report)
            pending = []
    _write(index, pending, embedder, report)
    for path in sorted(set(known) - present):
        index.drop(path)
        report.removed.append(path)
    _backfill(index, embedder, report)
    return report


@dataclass
class _Changed:
    path: str
    state: FileState
    rows: list[ChunkRow]


def _write(index: MemoryIndex, group: list[_Changed], embedder: Embedder | None,
           report: SyncReport) -> None:
    """A group of changed files: their chunks embedded together (fewer calls), then written
    with the store held once (a DuckDB file opened once for the group, not once a file);
    still one transaction per file."""
    if not group:
        return
    _embed([r for changed in group for r in changed.rows], embedder, report)
    with index.store.hold():
        for changed in group:
            try:
                index.replace(changed.path, changed.state, log_date(changed.path), changed.rows)
            except DuplicateId:  # another process indexed it in the meantime (PostgreSQL)
                report.skipped.append((changed.path, "being indexed by another process"))
                continue
            report.indexed.append(changed.path)


def _embed(rows: list[ChunkRow], embedder: Embedder | None, report: SyncReport) -> None:
    if not rows or embedder is None or not embedder.available or report.embedding_note:
        return
    try:
        vectors = embedder.embed([r.text for r in rows])
    except EmbeddingUnavailable as exc:
        report.embedding_note = str(exc)
        return
    for row, vector in zip(rows, vectors, strict=True):
        row.embedding, row.embed_model = vector, embedder.model
    report.embedded += len(rows)


def _backfill(index: MemoryIndex, embedder: Embedder | None, report: SyncReport) -> None:
    if embedder is None or embedder.model is None or not embedder.available or report.embedding_note:
        return
    missing = index.unembedded(embedder.model, BACKFILL)
    if not missing:
        return
    try:
        vectors = embedder.embed([text for _, text in missing])
    except EmbeddingUnavailable as exc:
        report.embedding_note = str(exc)
        return
    index.set_embeddings(embedder.model, [(cid, v) for (cid, _), v in zip(missing, vectors, strict=True)])
    report.embedded += len(missing)
