"""The litellm adapter: system + messages + tool table in, normalized stream events out.

litellm is imported on first use, never at ``import forge_jupyter`` (it costs about a
second). Its price table is the bundled local copy (``LITELLM_LOCAL_MODEL_COST_MAP``), so
nothing waits on the network, and the OpenAI client's own silent retries are switched off
(``max_retries=0``): the harness owns the retry loop and records every attempt.

Streamed tool calls are assembled here by ``index`` — not with litellm's
``stream_chunk_builder`` — because providers send continuation fragments with ``id: ""`` or
``name: ""`` (Qwen, Mistral) and some send no id at all.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from .errors import ModelTimeout
from .model import Message, Tokens, ToolPart
from .scrub import valid_text

_litellm: Any = None


def litellm() -> Any:
    """The litellm module, imported once, offline and quiet."""
    global _litellm
    if _litellm is None:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        import litellm as module

        module.suppress_debug_info = True  # else an unprefixed model prints a provider list
        module.drop_params = True  # a provider that lacks a param (stream_options) ignores it
        _litellm = module
    return _litellm


# ------------------------------------------------------------------------------ stream events


@dataclass(slots=True)
class TextStart:
    pass


@dataclass(slots=True)
class TextDelta:
    text: str


@dataclass(slots=True)
class TextEnd:
    pass


@dataclass(slots=True)
class ReasoningStart:
    pass


@dataclass(slots=True)
class ReasoningDelta:
    text: str


@dataclass(slots=True)
class ReasoningEnd:
    signature: str | None = None


@dataclass(slots=True)
class ToolInputStart:
    """A tool call began streaming: its card can show while the arguments arrive."""

    index: int
    call_id: str
    name: str


@dataclass(slots=True)
class ToolCall:
    """A tool call whose arguments are complete (``arguments`` is the raw string)."""

    index: int
    call_id: str
    name: str
    arguments: str


@dataclass(slots=True)
class StepFinish:
    finish_reason: str | None
    tokens: Tokens
    cost: float | None
    model: str


StreamEvent = (
    TextStart | TextDelta | TextEnd | ReasoningStart | ReasoningDelta | ReasoningEnd
    | ToolInputStart | ToolCall | StepFinish
)


@dataclass(slots=True)
class _ToolAcc:
    index: int
    call_id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    announced: bool = False


def _finish_name(reason: str | None) -> str | None:
    if reason is None:
        return None
    return {"tool_calls": "tool-calls", "function_call": "tool-calls", "content_filter": "content-filter",
            "end_turn": "stop", "tool_use": "tool-calls", "max_tokens": "length"}.get(reason, reason)


class ChunkNormalizer:
    """Turns litellm chunks into stream events; one instance per model round.

    Per-chunk work is a few attribute reads: litellm itself costs ~0.3 ms a chunk here, and the
    harness must stay small beside it.
    """

    def __init__(self) -> None:
        self.mode: str | None = None  # "text" | "reasoning" | None
        self.tools: dict[int, _ToolAcc] = {}
        self.finish_reason: str | None = None
        self.usage: Any = None
        self.signature: str | None = None
        # What the model wrote, for a local token count when the wire has no usage.
        self.text_out: list[str] = []
        self.reasoning_out: list[str] = []
        self.received_content = False

    def _switch(self, mode: str | None, out: list) -> None:
        if self.mode == mode:
            return
        if self.mode == "text":
            out.append(TextEnd())
        elif self.mode == "reasoning":
            out.append(ReasoningEnd(self.signature))
            self.signature = None
        if mode == "text":
            out.append(TextStart())
        elif mode == "reasoning":
            out.append(ReasoningStart())
        self.mode = mode

    def feed(self, chunk: Any) -> list:
        out: list = []
        usage = getattr(chunk, "usage", None)
        if usage is not None:
            self.usage = usage
        choices = chunk.choices
        if not choices:
            return out  # usage-only chunk, or an Azure prompt-filter chunk
        choice = choices[0]
        delta = choice.delta
        if delta is not None:
            reasoning = getattr(delta, "reasoning_content", None)
            if reasoning:
                reasoning = valid_text(reasoning)  # a "\ud800" on the wire is a lone surrogate
                self._switch("reasoning", out)
                out.append(ReasoningDelta(reasoning))
                self.reasoning_out.append(reasoning)
                self.received_content = True
            blocks = getattr(delta, "thinking_blocks", None)
            if blocks:
                for block in blocks:
                    sig = block.get("signature") if isinstance(block, dict) else None
                    if sig:
                        self.signature = sig
            content = delta.content
            if content:
                content = valid_text(content)
                self._switch("text", out)
                out.append(TextDelta(content))
                self.text_out.append(content)
                self.received_content = True
            tool_calls = delta.tool_calls
            if tool_calls:
                self._switch(None, out)
                for position, tc in enumerate(tool_calls):
                    self._tool_fragment(tc, position, out)
                self.received_content = True
        if choice.finish_reason:
            self.finish_reason = choice.finish_reason
        return out

    def _tool_fragment(self, tc: Any, position: int, out: list) -> None:
        index = getattr(tc, "index", None)
        call_id = getattr(tc, "id", None) or ""
        fn = getattr(tc, "function", None)
        name = (getattr(fn, "name", None) or "") if fn is not None else ""
        arguments = (getattr(fn, "arguments", None) or "") if fn is not None else ""
        if index is None:
            # No index: a fragment with a new id starts a call, anything else continues the last.
            known = next((a for a in self.tools.values() if call_id and a.call_id == call_id), None)
            if known is not None:
                index = known.index
            elif call_id or not self.tools:
                index = len(self.tools)
            else:
                index = max(self.tools)
        acc = self.tools.get(index)
        if acc is None:
            acc = self.tools[index] = _ToolAcc(index)
        if call_id and not acc.call_id:  # later fragments may carry id "" — never overwrite
            acc.call_id = call_id
        if name and not acc.name:
            acc.name = valid_text(name)
        if arguments:
            acc.arguments.append(valid_text(arguments))
        if not acc.announced and acc.name:
            acc.announced = True
            if not acc.call_id:
                acc.call_id = "call_" + secrets.token_hex(12)
            out.append(ToolInputStart(index, acc.call_id, acc.name))

    def close(self) -> list:
        """End open blocks and emit every tool call, in index order."""
        out: list = []
        self._switch(None, out)
        for index in sorted(self.tools):
            acc = self.tools[index]
            if not acc.call_id:
                acc.call_id = "call_" + secrets.token_hex(12)
            out.append(ToolCall(index, acc.call_id, acc.name, "".join(acc.arguments)))
        return out


# ------------------------------------------------------------------------------ usage and cost


def tokens_from_usage(usage: Any) -> Tokens:
    def get(obj: Any, name: str) -> int:
        if obj is None:
            return 0
        value = obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)
        return int(value or 0)

    completion_details = getattr(usage, "completion_tokens_details", None)
    prompt_details = getattr(usage, "prompt_tokens_details", None)
    return Tokens(
        input=get(usage, "prompt_tokens"),
        output=get(usage, "completion_tokens"),
        reasoning=get(completion_details, "reasoning_tokens"),
        cache_read=get(prompt_details, "cached_tokens") or get(usage, "cache_read_input_tokens"),
        cache_write=get(usage, "cache_creation_input_tokens"),
    )


def count_tokens(model: str, *, messages: list[dict] | None = None, text: str | None = None) -> int:
    """A local token count (litellm's tokenizer for the model, else tiktoken's default)."""
    lm = litellm()
    try:
        if messages is not None:
            return int(lm.token_counter(model=model, messages=messages))
        return int(lm.token_counter(model=model, text=text or ""))
    except Exception:  # an unknown tokenizer: about four characters a token
        size = len(json.dumps(messages)) if messages is not None else len(text or "")
        return max(1, size // 4)


def step_cost(model: str, tokens: Tokens) -> float | None:
    """Cost from litellm's bundled price table; None when the table lacks the model."""
    lm = litellm()
    try:
        prompt_cost, completion_cost = lm.cost_per_token(
            model=model,
            prompt_tokens=tokens.input,
            completion_tokens=tokens.output,
            cache_read_input_tokens=tokens.cache_read,
            cache_creation_input_tokens=tokens.cache_write,
        )
    except Exception:
        return None
    return float(prompt_cost) + float(completion_cost)


def input_price(model: str) -> float | None:
    """USD per input token, or None for a model the price table does not know."""
    lm = litellm()
    try:
        info = lm.get_model_info(model=model)
    except Exception:
        return None
    price = info.get("input_cost_per_token")
    return float(price) if price is not None else None


def context_window(model: str) -> tuple[int | None, int | None]:
    """(max input tokens, max output tokens) from litellm's model info, None where unknown."""
    lm = litellm()
    try:
        info = lm.get_model_info(model=model)
    except Exception:
        return None, None
    max_in = info.get("max_input_tokens") or info.get("max_tokens")
    max_out = info.get("max_output_tokens")
    return (int(max_in) if max_in else None, int(max_out) if max_out else None)


# -------------------------------------------------------------------------- the model's view


def provider_of(model: str) -> str:
    return model.split("/", 1)[0] if "/" in model else "openai"


def to_model_messages(view: list[Message], *, model: str) -> list[dict[str, Any]]:
    """Messages in litellm's (OpenAI) format. Unfinished tool calls are never sent."""
    anthropic = provider_of(model) == "anthropic"
    out: list[dict[str, Any]] = []
    for message in view:
        if message.role == "user":
            texts = []
            for p in message.parts:
                if p.type == "text" and p.text:
                    texts.append(p.text)
                elif p.type == "file":
                    texts.append(f"[attached file: {p.path or p.url} ({p.mime})]")
                elif p.type == "compaction":
                    texts.append(
                        "Summarize our conversation so far for continuing the work "
                        "(this is a context compaction)."
                    )
            if texts:
                out.append({"role": "user", "content": "\n\n".join(texts)})
            continue
        texts = [p.text for p in message.parts if p.type == "text" and p.text]
        tools = [p for p in message.parts if isinstance(p, ToolPart) and p.is_terminal]
        entry: dict[str, Any] = {"role": "assistant", "content": "\n\n".join(texts) or None}
        if anthropic:
            blocks = [
                {"type": "thinking", "thinking": p.text, "signature": p.metadata["signature"]}
                for p in message.parts
                if p.type == "reasoning" and p.metadata.get("signature")
            ]
            if blocks:
                entry["thinking_blocks"] = blocks
        if tools:
            entry["tool_calls"] = [
                {
                    "id": t.call_id,
                    "type": "function",
                    "function": {
                        "name": t.tool,
                        # Invalid JSON is never sent back (Anthropic's transform rejects it
                        # client-side, poisoning every later request); the tool's error
                        # message quotes what the model wrote instead.
                        "arguments": json.dumps(t.input) if t.raw_input is None else "{}",
                    },
                }
                for t in tools
            ]
        if entry["content"] is None and not tools:
            continue  # an empty or failed round: nothing for the model to read
        out.append(entry)
        for t in tools:
            content = t.output if t.state == "completed" else f"Error: {t.error}"
            out.append({"role": "tool", "tool_call_id": t.call_id, "content": content or ""})
    return out


# ------------------------------------------------------------------------------------ calling


@dataclass
class LLMRequest:
    model: str
    system: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)  # api_base, api_key, temperature, …

    def litellm_kwargs(self) -> dict[str, Any]:
        messages = [{"role": "system", "content": self.system}, *self.messages] if self.system else self.messages
        kwargs: dict[str, Any] = {
            "max_retries": 0,  # the OpenAI client would silently retry 429s twice
            **self.params,
            "model": self.model,
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if self.tools:
            kwargs["tools"] = self.tools
        return kwargs


def _wire_had_usage(response: Any) -> bool | None:
    """Whether the provider itself sent usage (None: cannot tell).

    When a provider sends no usage, litellm synthesizes a usage chunk from its own tokenizer
    and marks it nowhere. Its stream wrapper keeps every provider chunk it processed in
    ``.chunks``, with the provider's usage still attached, so that list tells the two apart.
    """
    chunks = getattr(response, "chunks", None)
    if not isinstance(chunks, list):
        return None
    return any(getattr(c, "usage", None) is not None for c in chunks)


def _timed_out(exc: BaseException) -> bool:
    """litellm's read timeout: ``Timeout`` (HTTP 408), or wrapped in ``MidStreamFallbackError``
    when the stream had begun (Anthropic route, litellm 1.110)."""
    if type(exc).__name__ == "MidStreamFallbackError":
        exc = getattr(exc, "original_exception", None) or exc
    return type(exc).__name__ in ("Timeout", "APITimeoutError", "ReadTimeout")


def _timeout_error(seconds: float, started: bool) -> ModelTimeout:
    what = ("went silent for {s:g} s in the middle of its answer" if started
            else "accepted the request but sent nothing for {s:g} s")
    return ModelTimeout(
        f"the model server {what.format(s=seconds)}. If the model is just slow to answer, raise "
        f"Forge.stream_timeout (FORGE_STREAM_TIMEOUT, now {seconds:g} s); otherwise check the "
        "server.", seconds)


async def stream(request: LLMRequest) -> AsyncIterator[Any]:
    """Stream events for one model round; exceptions from litellm propagate unchanged, except
    a read timeout (``stream_timeout`` seconds without a byte), which becomes ModelTimeout."""
    lm = litellm()
    kwargs = request.litellm_kwargs()
    limit = kwargs.get("stream_timeout")
    normalizer = ChunkNormalizer()
    chunks = 0
    try:
        response = await lm.acompletion(**kwargs)
    except Exception as exc:
        if isinstance(limit, int | float) and _timed_out(exc):
            raise _timeout_error(limit, False) from exc
        raise
    try:
        async for chunk in response:
            chunks += 1
            for event in normalizer.feed(chunk):
                yield event
    except Exception as exc:
        if isinstance(limit, int | float) and _timed_out(exc):
            raise _timeout_error(limit, chunks > 0) from exc
        raise
    finally:
        close = getattr(response, "aclose", None)
        if close is not None and normalizer.finish_reason is None:
            try:
                await close()
            except Exception:
                pass
    for event in normalizer.close():
        yield event
    if normalizer.usage is not None:
        tokens = tokens_from_usage(normalizer.usage)
        tokens.estimated = _wire_had_usage(response) is False
    else:
        tokens = Tokens(
            input=count_tokens(request.model, messages=kwargs["messages"]),
            output=count_tokens(request.model,
                                text="".join(normalizer.text_out + normalizer.reasoning_out)),
            estimated=True,
        )
    yield StepFinish(
        finish_reason=_finish_name(normalizer.finish_reason),
        tokens=tokens,
        cost=step_cost(request.model, tokens),
        model=request.model,
    )
