"""The long-term memory index's SQL (schema step 5): files, chunks, terms, BM25, cosine.

The memory package (``forge_jupyter/memory/``) reads the memory folder, splits files into
chunks, counts their terms and asks for embeddings; everything it keeps goes through here, one
transaction at a time, on the connection the store gives (``Store.memory_index``). The queries
are written once, in the dialect DuckDB and PostgreSQL both read (``postgres/connection`` translates
the placeholders): BM25 is computed from the term counts with ``ln``, ``count`` and ``avg`` —
no full-text extension — and the vector query calls ``array_cosine_similarity``, DuckDB's
builtin, which the PostgreSQL schema defines as a function.

Every statement names the tenant and the folder: one tenant may index several memory folders.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..base import Store
from ..rows import append_rows, timestamp

CHUNK_COLUMNS = ("tenant_id", "id", "folder", "path", "start_line", "end_line", "text", "terms",
                 "file_date", "embedding", "embed_model", "embed_dims")
TERM_COLUMNS = ("tenant_id", "folder", "path", "chunk_id", "term", "tf")
BM25_K1 = 1.2  # term-frequency saturation
BM25_B = 0.75  # length normalization


@dataclass(frozen=True, slots=True)
class FileState:
    """A memory file as the index last saw it: when it changes, it is indexed again."""

    size: int
    mtime_ns: int
    sha256: str


@dataclass(slots=True)
class ChunkRow:
    """One chunk to index: its lines, text, term counts, and its embedding if there is one."""

    id: str
    start_line: int
    end_line: int
    text: str
    terms: dict[str, int]
    embedding: list[float] | None = None
    embed_model: str | None = None


@dataclass(frozen=True, slots=True)
class StoredChunk:
    id: str
    path: str
    start_line: int
    end_line: int
    text: str
    file_date: dt.date | None


@dataclass(slots=True)
class MemoryIndex:
    """The index of one memory folder, for the store's tenant."""

    store: Store
    folder: str
    _scope: dict[str, Any] = field(init=False)

    def __post_init__(self) -> None:
        self._scope = {"tenant": self.store.tenant_id, "folder": self.folder}

    # -- what is indexed ----------------------------------------------------------------

    def files(self) -> dict[str, FileState]:
        with self.store.memory_index() as con:
            rows = con.execute(
                "SELECT path, size, mtime_ns, sha256 FROM memory_file "
                "WHERE tenant_id = $tenant AND folder = $folder", self._scope).fetchall()
        return {r[0]: FileState(int(r[1]), int(r[2]), r[3]) for r in rows}

    def touch(self, path: str, state: FileState) -> None:
        """The file's bytes are unchanged (its time was): remember its new time."""
        with self.store.memory_index() as con:
            con.execute("UPDATE memory_file SET size = $size, mtime_ns = $mtime WHERE "
                        "tenant_id = $tenant AND folder = $folder AND path = $path",
                        {**self._scope, "path": path, "size": state.size, "mtime": state.mtime_ns})

    def replace(self, path: str, state: FileState, file_date: dt.date | None,
                chunks: Sequence[ChunkRow]) -> None:
        """The file's chunks and terms, instead of what was indexed of it, in one transaction."""
        at = {**self._scope, "path": path}
        with self.store.memory_index() as con:
            _delete(con, at)
            con.execute(
                "INSERT INTO memory_file (tenant_id, folder, path, size, mtime_ns, sha256, "
                "file_date, chunks, indexed_at) VALUES ($tenant, $folder, $path, $size, $mtime, "
                "$sha, $date, $chunks, $at)",
                {**at, "size": state.size, "mtime": state.mtime_ns, "sha": state.sha256,
                 "date": file_date, "chunks": len(chunks), "at": timestamp(time.time())})
            # the appender: DuckDB's bulk path, pipelined INSERTs on PostgreSQL (one round trip)
            t, f = self.store.tenant_id, self.folder
            append_rows(con, "memory_chunk", CHUNK_COLUMNS, [
                (t, c.id, f, path, c.start_line, c.end_line, c.text, sum(c.terms.values()),
                 file_date, c.embedding, c.embed_model if c.embedding else None,
                 len(c.embedding) if c.embedding else None) for c in chunks])
            append_rows(con, "memory_term", TERM_COLUMNS, [
                (t, f, path, c.id, term, count) for c in chunks for term, count in c.terms.items()])

    def drop(self, path: str) -> None:
        with self.store.memory_index() as con:
            _delete(con, {**self._scope, "path": path})

    # -- embeddings ---------------------------------------------------------------------

    def unembedded(self, model: str, limit: int) -> list[tuple[str, str]]:
        """(id, text) of chunks with no embedding by ``model`` (new, or made by another)."""
        with self.store.memory_index() as con:
            return [(r[0], r[1]) for r in con.execute(
                "SELECT id, text FROM memory_chunk WHERE tenant_id = $tenant AND folder = $folder "
                "AND embed_model IS DISTINCT FROM $model ORDER BY id LIMIT $limit",
                {**self._scope, "model": model, "limit": limit}).fetchall()]

    def set_embeddings(self, model: str, vectors: Sequence[tuple[str, list[float]]]) -> None:
        with self.store.memory_index() as con:
            for chunk_id, vector in vectors:
                con.execute(
                    "UPDATE memory_chunk SET embedding = CAST($embedding AS REAL[]), "
                    "embed_model = $model, embed_dims = $dims WHERE tenant_id = $tenant "
                    "AND folder = $folder AND id = $id",
                    {**self._scope, "id": chunk_id, "embedding": vector, "model": model,
                     "dims": len(vector)})

    # -- search -------------------------------------------------------------------------

    def keyword(self, terms: Sequence[str], limit: int) -> list[tuple[str, float]]:
        """(chunk id, BM25 score) of the chunks holding any of ``terms``, best first."""
        if not terms:
            return []
        with self.store.memory_index() as con:
            rows = con.execute(_BM25, {**self._scope, "terms": sorted(set(terms)),
                                       "k1": BM25_K1, "b": BM25_B, "limit": limit}).fetchall()
        return [(r[0], float(r[1])) for r in rows]

    def vector(self, model: str, query: Sequence[float], limit: int) -> list[tuple[str, float]]:
        """(chunk id, cosine similarity) of the chunks embedded by ``model``, best first."""
        dims = len(query)
        if dims == 0:
            return []
        # the dimension is a number we counted, never text from outside: safe in the SQL
        sql = (f"SELECT id, array_cosine_similarity(CAST(embedding AS REAL[{dims:d}]), "
               f"CAST($query AS REAL[{dims:d}])) AS similarity FROM memory_chunk "
               "WHERE tenant_id = $tenant AND folder = $folder AND embed_model = $model "
               "AND embed_dims = $dims ORDER BY similarity DESC, id LIMIT $limit")
        with self.store.memory_index() as con:
            rows = con.execute(sql, {**self._scope, "model": model, "dims": dims,
                                     "query": [float(x) for x in query], "limit": limit}).fetchall()
        return [(r[0], float(r[1] or 0.0)) for r in rows]

    def chunks(self, ids: Sequence[str]) -> dict[str, StoredChunk]:
        if not ids:
            return {}
        with self.store.memory_index() as con:
            rows = con.execute(
                "SELECT id, path, start_line, end_line, text, file_date FROM memory_chunk "
                "WHERE tenant_id = $tenant AND folder = $folder AND id = ANY($ids)",
                {**self._scope, "ids": list(ids)}).fetchall()
        return {r[0]: StoredChunk(r[0], r[1], int(r[2]), int(r[3]), r[4], r[5]) for r in rows}


def _delete(con: Any, at: dict[str, Any]) -> None:
    for table in ("memory_term", "memory_chunk", "memory_file"):
        con.execute(f"DELETE FROM {table} WHERE tenant_id = $tenant AND folder = $folder "
                    "AND path = $path", at)


# BM25 (Robertson/Spärck Jones idf with +1, as Lucene): per query term present in a chunk,
# idf · tf·(k1+1) / (tf + k1·(1 − b + b·len/avglen)), summed over the query's terms. The
# corpus statistics are this folder's chunks.
_BM25 = """
WITH q AS (SELECT DISTINCT unnest(CAST($terms AS VARCHAR[])) AS term),
stats AS (
    SELECT CAST(count(*) AS DOUBLE PRECISION) AS n,
           CAST(coalesce(avg(terms), 1) AS DOUBLE PRECISION) AS avglen
    FROM memory_chunk WHERE tenant_id = $tenant AND folder = $folder
),
df AS (
    SELECT t.term, CAST(count(*) AS DOUBLE PRECISION) AS df
    FROM memory_term t JOIN q ON q.term = t.term
    WHERE t.tenant_id = $tenant AND t.folder = $folder
    GROUP BY t.term
)
SELECT t.chunk_id,
       sum(ln(1 + (s.n - df.df + 0.5) / (df.df + 0.5))
           * (t.tf * ($k1 + 1)) / (t.tf + $k1 * (1 - $b + $b * c.terms / greatest(s.avglen, 1))))
       AS score
FROM memory_term t
JOIN df ON df.term = t.term
JOIN memory_chunk c ON c.tenant_id = t.tenant_id AND c.id = t.chunk_id
CROSS JOIN stats s
WHERE t.tenant_id = $tenant AND t.folder = $folder
GROUP BY t.chunk_id
ORDER BY score DESC, t.chunk_id
LIMIT $limit
"""
