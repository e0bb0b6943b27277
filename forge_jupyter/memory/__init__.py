"""Long-term memory (issue 15): a folder of Markdown — MEMORY.md and daily logs — searched by
BM25 keyword + vector similarity + temporal decay, its index kept in the store.

folder (the files, read as untrusted input) · chunks (lines → chunks, text → terms) · embed
(litellm embeddings, or why none) · sync (only changed files re-indexed) · search (the hybrid
ranking) · flush (a compaction's daily-log entry) · tools (memory_search, memory_get) · frame
(the person's DataFrame) · service (``LongTermMemory``: all of it for one folder). The SQL is
in ``store/sql/memory_index.py``. Never imports IPython; litellm only when an embedding is asked.
"""

from .search import Hit, SearchResult, Weights
from .service import LongTermMemory, memory_path, project_of
from .sync import SyncReport
from .tools import MEMORY_FLAG

__all__ = ["MEMORY_FLAG", "Hit", "LongTermMemory", "SearchResult", "SyncReport", "Weights", "memory_path",
           "project_of"]
