"""Which model errors are retried, how long to wait, and how to say what went wrong."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import ModelTimeout

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})

Kind = Literal["retry", "context", "credentials", "fatal"]
_CONNECTION_ERRORS = frozenset({"APIConnectionError", "Timeout", "APITimeoutError",
                                "RemoteProtocolError", "ReadError", "ConnectError", "ReadTimeout"})
_NOISE = re.compile(r"^(litellm\.)?\w+(Error|Exception|Timeout)(:| -)\s*")
# A key that is missing or refused. litellm reports the OpenAI client's own "Missing
# credentials" (no key at all: nothing was sent) as InternalServerError, HTTP 500 — retried
# like an overload, five times for ~12 s, until these words are read first.
_CREDENTIALS = re.compile(
    r"missing credentials|missing [\w ]{0,20}api[ _-]?key|no api[ _-]?key|"
    r"(invalid|incorrect|wrong|expired|revoked) (x-)?api[ _-]?key|api[ _-]?key (is )?"
    r"(missing|required|not (set|provided|valid))|invalid_api_key|api_key client option must be set",
    re.IGNORECASE)


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
    if credentials_refused(exc):  # the same key fails the same way every time: never retried
        return "credentials"
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


def credentials_refused(exc: BaseException) -> bool:
    """A missing, wrong or refused key: HTTP 401/403, litellm's AuthenticationError or
    PermissionDeniedError, or a message that says so (under whatever status litellm gives it)."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:  # and whatever litellm wrapped
        seen.add(id(exc))
        if type(exc).__name__ in ("AuthenticationError", "PermissionDeniedError"):
            return True
        if _status(exc) in (401, 403) or _CREDENTIALS.search(str(exc)):
            return True
        exc = getattr(exc, "original_exception", None)  # type: ignore[assignment]
    return False


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


def describe_credentials(exc: BaseException, model: str, params: dict[str, Any]) -> str:
    """A missing or refused key: what happened, in the provider's words, and what to set —
    the provider's variable, or for a local server Forge.api_base and FORGE_API_KEY."""
    import os

    from ..model_choice import PLACEHOLDER_KEY, key_variables

    names = key_variables(model)
    var = " or ".join(names) or "the provider's API key variable"
    status = _status(exc)
    said = f"(HTTP {status}: {_words(exc)})" if status not in (None, 500) else f"({_words(exc)})"
    key = params.get("api_key")
    if params.get("api_base"):
        if key == PLACEHOLDER_KEY:
            return (f"the model server at Forge.api_base wants an API key and none is set {said}. "
                    f"Set FORGE_API_KEY to that server's key (or {var}).")
        return (f"the model server at Forge.api_base refused the API key {said}. Check "
                f"FORGE_API_KEY (or {var}, or Forge(api_key=…)), or unset it if the server "
                "needs no key.")
    if not key and not any(os.environ.get(n) for n in names):  # litellm sent nothing
        return (f"no API key for {model}: nothing was sent ({_words(exc)}). Set {var}; or, for a local "
                "OpenAI-compatible server that needs no key, set Forge.api_base (FORGE_API_BASE) "
                "to its URL — a placeholder key is sent then (FORGE_API_KEY if it wants one).")
    where = "the key given as Forge(api_key=…)" if key else var
    return (f"the model server refused the API key {said}. Check {where}; for a key-less "
            "local server set Forge.api_base (FORGE_API_BASE) instead, and FORGE_API_KEY if it "
            "wants a key.")


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
