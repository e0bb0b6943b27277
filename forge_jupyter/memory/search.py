"""Hybrid search: BM25 keyword + vector similarity, weighted, times a temporal decay.

score = (keyword_weight · bm25 / best bm25 + vector_weight · max(cosine, 0))
        / (keyword_weight + vector_weight) · 0.5 ** (age in days / half-life)

The keyword score is scaled so the best keyword match of the query scores 1. Age comes from a
daily log's name (``2026-11-30.md``); MEMORY.md and other notes are evergreen (no decay).
Without vectors (no embedding model, or its call failed) the score is the keyword part alone,
and the result says so.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Literal

from ..store.sql.memory_index import MemoryIndex, StoredChunk
from .chunks import terms
from .embed import Embedder, EmbeddingUnavailable

SNIPPET_CHARS = 700
MAX_RESULTS = 50
MIN_SCORE = 1e-6


@dataclass(frozen=True, slots=True)
class Weights:
    keyword: float = 0.3
    vector: float = 0.7
    half_life_days: float = 7.0

    def __post_init__(self) -> None:
        for name in ("keyword", "vector", "half_life_days"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or value != value or value < 0 or value == float("inf"):
                raise ValueError(f"memory {name.replace('_', ' ')} must be a number ≥ 0, got {value!r}")
        if self.keyword + self.vector <= 0:
            raise ValueError("the memory search weights (keyword, vector) cannot both be 0")


@dataclass(frozen=True, slots=True)
class Hit:
    path: str
    start_line: int
    end_line: int
    score: float
    snippet: str
    keyword: float  # the scaled BM25 part, 0–1
    vector: float | None  # cosine similarity, None in keyword-only search
    decay: float  # the recency factor applied, 1 for evergreen files


@dataclass
class SearchResult:
    query: str
    hits: list[Hit] = field(default_factory=list)
    mode: Literal["hybrid", "keyword"] = "keyword"
    note: str | None = None  # why the search was keyword-only


def decay(file_date: dt.date | None, today: dt.date, half_life_days: float) -> float:
    if file_date is None or half_life_days <= 0:
        return 1.0
    age = max((today - file_date).days, 0)
    return 0.5 ** (age / half_life_days)


def snippet(text: str) -> str:
    text = text.strip()
    return text if len(text) <= SNIPPET_CHARS else text[:SNIPPET_CHARS].rstrip() + " …"


def hybrid_search(index: MemoryIndex, query: str, k: int, embedder: Embedder | None,
                  weights: Weights, *, today: dt.date | None = None,
                  note: str | None = None) -> SearchResult:
    """The ``k`` best chunks for ``query``; ``note``: a reason vectors are already known
    to be missing (from the sync just before)."""
    today = today or dt.date.today()
    k = max(1, min(int(k), MAX_RESULTS))
    pool = max(50, 4 * k)
    result = SearchResult(query)
    keyword = dict(index.keyword(terms(query), pool))
    vector: dict[str, float] | None = None
    if weights.vector > 0 and note is None:
        if embedder is None or embedder.model is None:
            note = embedder.reason if embedder is not None else "no embedding model"
        else:
            try:
                (query_vector,) = embedder.embed([query])
                vector = {cid: max(sim, 0.0) for cid, sim in
                          index.vector(embedder.model, query_vector, pool)}
                result.mode = "hybrid"
            except EmbeddingUnavailable as exc:
                note = str(exc)
    result.note = note if vector is None and weights.vector > 0 else None
    best = max(keyword.values(), default=0.0) or 1.0
    wk, wv = (weights.keyword, weights.vector) if vector is not None else (1.0, 0.0)
    ids = set(keyword) | set(vector or ())
    chunks: dict[str, StoredChunk] = index.chunks(sorted(ids))
    hits = []
    for cid, chunk in chunks.items():
        kw = keyword.get(cid, 0.0) / best
        vs = (vector or {}).get(cid, 0.0)
        base = (wk * kw + wv * vs) / (wk + wv)
        if base <= MIN_SCORE:  # no shared evidence (float32 cosine leaves ~1e-9 for orthogonal)
            continue
        factor = decay(chunk.file_date, today, weights.half_life_days)
        hits.append(Hit(chunk.path, chunk.start_line, chunk.end_line, base * factor,
                        snippet(chunk.text), kw, vs if vector is not None else None, factor))
    hits.sort(key=lambda h: (-h.score, h.path, h.start_line))
    result.hits = hits[:k]
    return result
