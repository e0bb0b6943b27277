"""Which model errors are retried, how long to wait, and how to say what went wrong."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Literal

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})

Kind = Literal["retry", "context", "fatal"]


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
    if name == "ContextWindowExceededError" or "context window" in str(exc).lower():
        return "context"
    if name == "MidStreamFallbackError":
        # An error event inside the stream (OpenRouter's "Token limit reached", a 400 upstream
        # that litellm reports as 500): retrying pays for the same failure again.
        return "fatal"
    status = _status(exc)
    if status in RETRYABLE_STATUS:
        return "retry"
    if name in ("APIConnectionError", "Timeout", "APITimeoutError", "ServiceUnavailableError",
                "InternalServerError", "RateLimitError", "RemoteProtocolError", "ReadError",
                "ConnectError", "ReadTimeout"):
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
    """A readable one-paragraph reason: the provider's words without litellm's prefixes."""
    text = str(exc).strip() or type(exc).__name__
    for prefix in ("litellm.", "litellm "):
        if text.startswith(prefix):
            text = text[len(prefix):]
    status = _status(exc)
    head = type(exc).__name__ + (f" (HTTP {status})" if status else "")
    if text.startswith(type(exc).__name__ + ":"):
        text = text[len(type(exc).__name__) + 1:].strip()
    if len(text) > 2000:
        text = text[:2000] + " …"
    return f"{head}: {text}"
