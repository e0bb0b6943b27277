"""One streamed model call: litellm in, stream events out, a silent server named as such.

The OpenAI client's own silent retries are switched off (``max_retries=0``, in the request):
the harness owns the retry loop (``session/retry.py``) and records every attempt.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable

from ..errors import ModelTimeout
from ..message import Part, ReasoningPart, TextPart, ToolPart
from .chunks import ChunkNormalizer, finish_name
from .events import StepFinish, StreamEvent
from .lean import LeanChunks, readable
from .loading import litellm
from .request import LLMRequest
from .usage import estimated_usage, step_cost, tokens_from_usage, wire_had_usage


def timed_out(exc: BaseException) -> bool:
    """litellm's read timeout: ``Timeout`` (HTTP 408), or wrapped in ``MidStreamFallbackError``
    when the stream had begun (Anthropic route, litellm 1.110)."""
    if type(exc).__name__ == "MidStreamFallbackError":
        exc = getattr(exc, "original_exception", None) or exc
    return type(exc).__name__ in ("Timeout", "APITimeoutError", "ReadTimeout")


def timeout_error(seconds: float, started: bool) -> ModelTimeout:
    """What a person reads when the server went silent, and which setting to raise."""
    what = ("went silent for {s:g} s in the middle of its answer" if started
            else "accepted the request but sent nothing for {s:g} s")
    return ModelTimeout(
        f"the model server {what.format(s=seconds)}. If the model is just slow to answer, raise "
        f"Forge.stream_timeout (FORGE_STREAM_TIMEOUT, now {seconds:g} s); otherwise check the "
        "server.", seconds)


async def stream(request: LLMRequest) -> AsyncIterator[StreamEvent]:
    """Stream events for one model round; exceptions from litellm propagate unchanged, except
    a read timeout (``stream_timeout`` seconds without a byte), which becomes ModelTimeout."""
    lm = litellm()
    kwargs = request.litellm_kwargs()
    limit = kwargs.get("stream_timeout")
    normalizer = ChunkNormalizer()
    chunks = 0
    cap = request.output_cap
    cut = False
    try:
        response = await lm.acompletion(**kwargs)
    except Exception as exc:
        if isinstance(limit, int | float) and timed_out(exc):
            raise timeout_error(limit, False) from exc
        raise
    # the lean reader (lean.py) where asked for and the route allows: the same chunks, read
    # from the SSE without litellm's objects; litellm's own stream otherwise
    lean = LeanChunks(response) if request.lean and readable(request.model, response) else None
    try:
        async for chunk in lean if lean is not None else response:
            chunks += 1
            for event in normalizer.feed(chunk):
                yield event
            if cap is not None and normalizer.out_chars > cap:
                # a server that ignores max_tokens (or the budget) streams on: stop reading;
                # the response is closed below, the step ends as cut off at the limit
                cut = True
                break
    except Exception as exc:
        if isinstance(limit, int | float) and timed_out(exc):
            raise timeout_error(limit, chunks > 0) from exc
        raise
    finally:
        close = getattr(response, "aclose", None)
        if close is not None and (cut or normalizer.finish_reason is None):
            try:
                await close()
            except Exception:
                pass
    for event in normalizer.close():
        yield event
    # Usage litellm made up for a provider that sent none counts nothing (its counter is off,
    # loading.py): such a round is counted here, as a cut-off one is, and marked estimated.
    had_usage = lean.had_usage if lean is not None else wire_had_usage(response)
    if normalizer.usage is not None and not cut and had_usage is not False:
        tokens = tokens_from_usage(normalizer.usage)
    else:
        tokens = estimated_usage(request.model, kwargs["messages"], normalizer.output_text())
    yield StepFinish(
        finish_reason="length" if cut else finish_name(normalizer.finish_reason),
        tokens=tokens,
        cost=step_cost(request.model, tokens),
        model=request.model,
        cut=cut,
    )


def model_output(parts: Iterable[Part]) -> str:
    """What the model streamed into ``parts``: text, reasoning, tool calls' names and arguments
    (not the harness's synthetic notes)."""
    out = []
    for p in parts:
        if isinstance(p, TextPart | ReasoningPart) and not getattr(p, "synthetic", False):
            out.append(p.text)
        elif isinstance(p, ToolPart):
            out.append(p.tool + (p.raw_input if p.raw_input is not None else json.dumps(p.input)))
    return "".join(out)


def unfinished_step(request: LLMRequest, parts: Iterable[Part], reason: str) -> StepFinish:
    """The step-finish of a round that ended before the provider reported its usage (stopped,
    or its stream broke): the request and what streamed into ``parts``, counted here and marked
    estimated; cost None where the price table lacks the model."""
    tokens = estimated_usage(request.model, request.wire_messages(), model_output(parts))
    return StepFinish(reason, tokens, step_cost(request.model, tokens), request.model)
