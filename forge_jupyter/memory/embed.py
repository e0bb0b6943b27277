"""Embeddings through litellm's embedding API, when a provider is configured.

The model is ``Forge.memory_embedding_model`` (``FORGE_MEMORY_EMBEDDING_MODEL``); left empty,
it is found from the environment — ``OPENAI_API_KEY`` gives ``openai/text-embedding-3-small``,
``GEMINI_API_KEY`` ``gemini/text-embedding-004`` — and ``none`` turns vectors off. A chat
model behind ``api_base`` (a local server) says nothing about embeddings there, so none is
guessed for it. The Forge's ``api_base`` and ``api_key`` go with each call. Nothing is
downloaded: no local embedding model. When there is no model, or a call fails, the search is
keyword-only and says why (``Embedder.reason``); after a failure no call is tried again for
``RETRY_AFTER`` seconds, so a search does not wait on a broken server every time.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any

from ..scrub import Scrubber

AUTO_MODELS = (("OPENAI_API_KEY", "openai/text-embedding-3-small"),
               ("GEMINI_API_KEY", "gemini/text-embedding-004"))
OFF = ("none", "off", "false", "0")
BATCH = 64
MAX_INPUT_CHARS = 8_000
TIMEOUT = 30.0
RETRY_AFTER = 60.0
HINT = ("set Forge.memory_embedding_model (FORGE_MEMORY_EMBEDDING_MODEL), e.g. "
        "openai/text-embedding-3-small")


class EmbeddingUnavailable(Exception):
    """No vectors now: the reason is in the message, ready to show."""


def choose_model(configured: str | None, litellm_kwargs: dict[str, Any]) -> tuple[str | None, str]:
    """(the embedding model or None, why none)."""
    value = (configured or "").strip()
    if value.lower() in OFF:
        return None, "embeddings are turned off (Forge.memory_embedding_model = 'none')"
    if value:
        return value, ""
    if litellm_kwargs.get("api_base"):
        return None, f"no embedding model is configured for the server at api_base; {HINT}"
    for variable, model in AUTO_MODELS:
        if os.environ.get(variable):
            return model, ""
    return None, f"no embedding provider is configured; {HINT}"


class Embedder:
    """Vectors for texts from one embedding model, or a reason why there are none."""

    def __init__(self, configured: str | None, litellm_kwargs: dict[str, Any]) -> None:
        self.model, self.reason = choose_model(configured, litellm_kwargs)
        self._kwargs = litellm_kwargs  # the Forge's own: a key set later is used too
        self._failed_at = 0.0

    @property
    def available(self) -> bool:
        if self.model is None:
            return False
        return time.monotonic() - self._failed_at >= RETRY_AFTER or not self._failed_at

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text; EmbeddingUnavailable (with the reason) when there are none."""
        if self.model is None:
            raise EmbeddingUnavailable(self.reason)
        if not self.available:
            raise EmbeddingUnavailable(self.reason)
        out: list[list[float]] = []
        try:
            for i in range(0, len(texts), BATCH):
                out.extend(self._call([t[:MAX_INPUT_CHARS] or " " for t in texts[i:i + BATCH]]))
        except Exception as exc:  # any provider error: the search goes on keyword-only
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
            self.reason = (f"the embedding call to {self.model} failed "
                           f"({Scrubber.from_environment()(first)})")
            self._failed_at = time.monotonic()
            raise EmbeddingUnavailable(self.reason) from exc
        self._failed_at, self.reason = 0.0, ""
        return out

    def _call(self, batch: list[str]) -> list[list[float]]:
        from ..llm.loading import litellm
        from ..model_choice import with_key

        assert self.model is not None
        params = with_key(self.model, {k: self._kwargs[k] for k in ("api_base", "api_key")
                                       if self._kwargs.get(k)})
        response = litellm().embedding(model=self.model, input=batch, timeout=TIMEOUT,
                                       max_retries=0, **params)
        data = sorted(response.data, key=lambda d: _field(d, "index") or 0)
        vectors = [[float(x) for x in _field(d, "embedding")] for d in data]
        if len(vectors) != len(batch) or any(not v for v in vectors):
            raise EmbeddingUnavailable(f"{self.model} returned {len(vectors)} vectors for "
                                       f"{len(batch)} texts")
        dims = {len(v) for v in vectors}
        if len(dims) != 1:
            raise EmbeddingUnavailable(f"{self.model} returned vectors of several lengths")
        return vectors


def _field(item: Any, name: str) -> Any:
    return item.get(name) if isinstance(item, dict) else getattr(item, name, None)
