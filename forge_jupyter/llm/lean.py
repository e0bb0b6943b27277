"""The lean wire adapter (``Forge.lean_stream``): an OpenAI-compatible stream's chunks read
straight from its SSE, without the openai SDK's and litellm's objects per chunk.

litellm still makes the request (``acompletion``): the body it sends, its client, its timeout
and every error before the first byte are its own. Only the reading of the answer differs:
where litellm's stream wrapper builds an SDK model and then its own ``ModelResponseStream`` for
each chunk (~0.4 ms a chunk, most of a streamed turn's CPU), this parses each ``data:`` line
with ``json.loads`` into ``Node`` dicts that read like those objects, with what litellm does
per chunk done the same way (``reasoning`` → ``reasoning_content``; a tool call with no index
numbered in its chunk; its guard against a model repeating one chunk) and the usage chunk
built as litellm's ``Usage``. What
breaks the stream mid-way goes to the wrapper's own failure handling, so it is raised as the
classes and messages litellm raises (session/retry.py reads them). ``ChunkNormalizer`` reads
these chunks as it reads litellm's: one code path above the wire.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

# litellm's provider routes whose stream is the openai SDK's over the server's own SSE
LEAN_PROVIDERS = frozenset({"openai"})
# litellm's callback lists: a person's logging (Langfuse, …) sees every chunk only through the
# wrapper, so with any of them set the stream is read by litellm
_CALLBACKS = ("callbacks", "success_callback", "_async_success_callback", "failure_callback",
              "_async_failure_callback")
# the stream wrapper's failure handling the reader hands a broken stream to (litellm ≥ 1.83);
# a litellm without it keeps its own reading
_HANDLERS = ("_log_stream_failure_and_raise",)


class Node(dict):
    """A JSON object read like litellm's chunk objects: ``node.name`` is ``node.get(name)``."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # protocols (pydantic's, copy's, pickle's) see a plain dict
            raise AttributeError(name)
        return self.get(name)


def readable(model: str, response: Any) -> bool:
    """Whether ``response`` (what ``acompletion`` returned) can be read lean: an openai/ route
    whose SDK stream has not started, in a litellm whose wrapper has the failure handling, and
    no litellm callbacks configured (they log what the wrapper assembles, which is skipped)."""
    if model.split("/", 1)[0] not in LEAN_PROVIDERS or "/" not in model:
        return False
    from .loading import litellm

    lm = litellm()
    if any(getattr(lm, name, None) for name in _CALLBACKS):
        return False
    stream = getattr(response, "completion_stream", None)
    raw = getattr(stream, "response", None)
    return (raw is not None and hasattr(raw, "aiter_lines") and not getattr(raw, "is_stream_consumed", True)
            and all(hasattr(response, h) for h in _HANDLERS))


class LeanChunks:
    """The chunks of ``response``'s SSE, one ``Node`` each; ``had_usage`` once read."""

    def __init__(self, response: Any) -> None:
        self.wrapper = response
        self.raw = response.completion_stream.response
        self.had_usage = False
        # the last two chunks' texts (None before any), and how many times in a row one came
        self.last: tuple[Any, Any] = (None, None)
        self.repeats = 1

    def __aiter__(self) -> AsyncIterator[Node]:
        return self._chunks()

    async def aclose(self) -> None:
        await self.wrapper.aclose()

    async def _chunks(self) -> AsyncIterator[Node]:
        wrapper = self.wrapper
        try:
            async for data in self._events():
                chunk = json.loads(data, object_hook=Node)
                if not isinstance(chunk, dict):
                    continue
                if chunk.get("error"):
                    raise _stream_error(chunk, self.raw)
                _normalize(chunk, self)
                wrapper.sent_first_chunk = True
                yield chunk
        except Exception as exc:  # what litellm's wrapper does with what its SDK stream raised
            await wrapper.aclose()
            wrapper._log_stream_failure_and_raise(exc)

    async def _events(self) -> AsyncIterator[str]:
        """Each SSE event's data (the lines of one event joined), up to ``[DONE]``; events
        with another name than ``error`` are skipped as the SDK's chat stream skips them. A
        transport's failure is raised as the SDK's stream raises it."""
        import openai

        timeouts, failures = _transport_errors()
        data: list[str] = []
        event = None
        try:
            async for line in self.raw.aiter_lines():
                if not line:
                    if data:
                        joined = "\n".join(data)
                        if joined.startswith("[DONE]"):
                            return
                        if event is None or event == "error":
                            yield joined
                    data, event = [], None
                    continue
                if line.startswith("data:"):
                    data.append(line[6:] if line.startswith("data: ") else line[5:])
                elif line.startswith("event:"):
                    event = line[6:].strip()
                # ":" comments (keep-alives), id: and retry: lines carry no chunk
        except timeouts as err:
            raise openai.APITimeoutError(request=self.raw.request) from err
        except failures as err:
            raise openai.APIConnectionError(request=self.raw.request) from err
        if data:
            joined = "\n".join(data)
            if not joined.startswith("[DONE]"):
                yield joined


def _transport_errors() -> tuple[tuple[type[BaseException], ...], tuple[type[BaseException], ...]]:
    """The exceptions the openai SDK's stream turns into APITimeoutError and
    APIConnectionError (its own list where it has one: it reads through httpx or httpx2)."""
    try:
        from openai._httpx2 import request_exceptions, timeout_exceptions

        return timeout_exceptions(), request_exceptions()
    except ImportError:
        import httpx

        return (httpx.TimeoutException,), (httpx.RequestError,)


def _normalize(chunk: Node, reader: LeanChunks) -> None:
    """litellm's per-chunk normalizations (``Delta.__init__``, the usage chunk), in place."""
    usage = chunk.get("usage")
    if usage:
        reader.had_usage = True
        from .loading import litellm

        try:
            chunk["usage"] = litellm().Usage(**usage)  # its counting of cached/reasoning tokens
        except Exception:
            pass  # a shape litellm refuses: the numbers as they came
    _repetition(chunk, reader)
    for choice in chunk.get("choices") or ():
        delta = choice.get("delta")
        if not delta:
            continue
        if delta.get("reasoning_content") is None and "reasoning" in delta:
            delta["reasoning_content"] = delta.pop("reasoning")
        calls = delta.get("tool_calls")
        if calls:
            counter = 0
            for call in calls:
                if call.get("index") is None:
                    call["index"] = counter
                    counter += 1


_NO_CHOICES = object()  # a chunk without choices (usage only): never compared


def _repetition(chunk: Node, reader: LeanChunks) -> None:
    """litellm's guard against a model stuck in a loop (``raise_on_model_repetition``), step
    for step: at each non-empty chunk, the two chunks before it are compared; the same text of
    more than 2 characters ``REPEATED_STREAMING_CHUNK_LIMIT`` times in a row raises its
    InternalServerError, with its words."""
    choices = chunk.get("choices")
    delta = choices[0].get("delta") if choices else None
    last, before = reader.last
    if delta and before is not None and last is not _NO_CHOICES and before is not _NO_CHOICES and (
            delta.get("content") or delta.get("tool_calls") or delta.get("function_call")
            or delta.get("reasoning_content") is not None
            or delta.get("provider_specific_fields") is not None):
        if not isinstance(last, str) or len(last) <= 2:
            reader.repeats = 1
        elif last == before:
            reader.repeats += 1
            from .loading import litellm

            lm = litellm()
            if reader.repeats >= lm.REPEATED_STREAMING_CHUNK_LIMIT:
                raise lm.InternalServerError(
                    message=f"The model is repeating the same chunk = {last}.", model="",
                    llm_provider="")
        else:
            reader.repeats = 1
    content = (delta.get("content") if delta else None) if choices else _NO_CHOICES
    reader.last = (content, "" if before is None and last is None else last)


def _stream_error(chunk: Node, raw: Any) -> Exception:
    """The error an event carried, as the openai SDK's stream raises it (then mapped by
    litellm's wrapper like any other)."""
    import openai

    error = chunk["error"]
    message = error.get("message") if isinstance(error, dict) else None
    if not message or not isinstance(message, str):
        message = "An error occurred during streaming"
    return openai.APIError(message=message, request=raw.request, body=error)
