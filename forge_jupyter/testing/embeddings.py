"""The fake model server's OpenAI-compatible ``POST …/embeddings``: deterministic vectors.

Each text becomes a hashed bag of words — every lower-cased word (but a few of the most common
English ones) adds ±1 to one of ``DIMS`` coordinates chosen by its SHA-256 — normalized to
length 1, so texts sharing words point the
same way and the same text always gets the same vector, with no model at all. Enough to test
the vector path of memory search through real litellm over HTTP.
"""

from __future__ import annotations

import hashlib
import math
import re
from typing import Any

DIMS = 64
_WORD = re.compile(r"\w+")
_COMMON = frozenset("a an and are as at be by do for from had has have how i in is it of on or "
                    "that the this to was we were what when where which who why with".split())


def hashed_vector(text: str, dims: int = DIMS) -> list[float]:
    vector = [0.0] * dims
    for word in _WORD.findall(text.casefold()):
        if word in _COMMON:
            continue
        digest = hashlib.sha256(word.encode("utf-8")).digest()
        vector[int.from_bytes(digest[:4], "big") % dims] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


def embeddings_body(request: dict[str, Any]) -> dict[str, Any]:
    """The response to an embeddings request (``input``: a string or a list of strings)."""
    texts = request.get("input")
    if isinstance(texts, str):
        texts = [texts]
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        raise ValueError("input must be a string or a list of strings")
    tokens = sum(len(_WORD.findall(t)) for t in texts)
    return {
        "object": "list",
        "data": [{"object": "embedding", "index": i, "embedding": hashed_vector(t)}
                 for i, t in enumerate(texts)],
        "model": request.get("model") or "fake-embedding",
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }
