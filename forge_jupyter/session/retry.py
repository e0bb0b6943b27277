"""Which model errors are retried, how long to wait, and how to say what went wrong."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import ModelTimeout

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})

Kind = Literal["retry", "context", "fatal"]
_CONNECTION_ERRORS = frozenset({"APIConnectionError", "Timeout", "APITimeoutError",
                                "RemoteProtocolError", "ReadError", "ConnectError", "ReadTimeout"})
_NOISE = re.compile(r"^(litellm\.)?\w+(Error|Exception|Timeout)(:| -)\s*")


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 5  # including the first
    base_delay: float = 1.0  # seconds before the first retry
    max_delay: float = 30.0
    max_retry_after: float = 120.0  # a longer Retry-After ends the run instead of sleeping

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after failed attempt ``attempt`` (1-based): Retry-After wins."""
        if retry_after is not None:
            return min(retry_after, self.max_retry_after)
        ceiling = min(self.max_delay, self.base_delay * (2 ** (attempt - 1)))
        return ceiling / 2 + random.uniform(0, ceiling / 2)  # jitter: spread retrying kernels


def _status(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        return status
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    return status if isinstance(status, int) else None


def classify(exc: BaseException) -> Kind:
    """retry: transient (rate limit, overload, 5xx, dropped connection); context: the prompt
    does not fit the model's window (compact, do not retry); fatal: anything else."""
    name = type(exc).__name__
    if isinstance(exc, ModelTimeout):  # no byte for stream_timeout seconds: a hung server, transient
        return "retry"
    if name == "ContextWindowExceededError" or "context window" in str(exc).lower():
        return "context"
    if name == "MidStreamFallbackError":
        # litellm wraps whatever broke a stream. A dropped connection is transient; an error
        # event inside the stream (OpenRouter's "Token limit reached", a 400 upstream that
        # litellm reports as 500) is not: retrying it pays for the same failure again.
        original = getattr(exc, "original_exception", None)
        if original is not None and type(original).__name__ in _CONNECTION_ERRORS:
            return "retry"
        return "fatal"
    status = _status(exc)
    if status in RETRYABLE_STATUS:
        return "retry"
    if name in _CONNECTION_ERRORS or name in ("ServiceUnavailableError", "InternalServerError",
                                              "RateLimitError"):
        return "retry"
    if status is None and isinstance(exc, ConnectionError | TimeoutError):
        return "retry"
    return "fatal"


def retry_after(exc: BaseException) -> float | None:
    """Seconds from a Retry-After (or retry-after-ms) header on the provider's answer."""
    headers: Any = None
    response = getattr(exc, "response", None)
    if response is not None:
        headers = getattr(response, "headers", None)
    if not headers:
        headers = getattr(exc, "litellm_response_headers", None)
    if not headers:
        return None
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return max(0.0, float(ms) / 1000)
        value = headers.get("retry-after")
        if value is not None:
            return max(0.0, float(value))
    except (TypeError, ValueError):
        return None  # an HTTP date: fall back to our own backoff
    return None


def describe(exc: BaseException) -> str:
    """A readable one-paragraph reason: what kind of failure, then the provider's own words
    without litellm's stacked ``litellm.XError: XError: OpenAIException -`` prefixes."""
    if isinstance(exc, ModelTimeout):
        return str(exc)  # our own words: what happened and which setting to raise
    original = getattr(exc, "original_exception", None)
    if type(exc).__name__ == "MidStreamFallbackError" and original is not None:
        kind = "the connection dropped" if type(original).__name__ in _CONNECTION_ERRORS else "the stream reported an error"
        return f"{kind} mid-stream: {_words(original)}"
    status = _status(exc)
    head = type(exc).__name__ + (f" (HTTP {status})" if status else "")
    return f"{head}: {_words(exc)}"


def _words(exc: BaseException) -> str:
    text = (getattr(exc, "message", None) or str(exc) or type(exc).__name__).strip()
    previous = None
    while previous != text:
        previous = text
        text = _NOISE.sub("", text).strip()
    text = text.split("\nReceived Model Group=")[0].split(". Received Model Group")[0]
    if len(text) > 2000:
        text = text[:2000] + " …"
    return text or type(exc).__name__
