"""A memory search as the person reads it: a DataFrame of file, line range, score, snippet."""

from __future__ import annotations

import pandas as pd

from ..frame_columns import MEMORY_HITS
from ..frames import typed
from .search import SearchResult


def hits_frame(result: SearchResult) -> pd.DataFrame:
    """One row per hit, best first; ``attrs``: the search's mode and, when it was
    keyword-only, why (``attrs["note"]``)."""
    frame = typed(pd.DataFrame([{"file": h.path, "start_line": h.start_line,
                                 "end_line": h.end_line, "score": h.score, "snippet": h.snippet}
                                for h in result.hits]), MEMORY_HITS)
    frame.attrs.update(query=result.query, mode=result.mode, note=result.note)
    return frame
