"""Render a Turn as provider wire format: OpenAI chat-completion chunks or Anthropic message events.

`stream()` yields what the HTTP handler does, in order: bytes (one SSE event to write and flush),
or an event of the turn that is not text, reasoning or a tool call, for the server to act on (a
test server's pause or dropped connection). `complete()` builds the non-streaming JSON body.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from .turn import Protocol, Reasoning, Text, ToolCall, Turn, Usage

if TYPE_CHECKING:
    from .server import RecordedRequest

Action = bytes | object  # an SSE event to write, or an event the server acts on

FAKE_SIGNATURE = "ZmFrZS1zaWduYXR1cmU="  # base64("fake-signature"): Anthropic always sends one

_TO_ANTHROPIC_STOP = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}
_TO_OPENAI_FINISH = {v: k for k, v in _TO_ANTHROPIC_STOP.items()} | {"stop_sequence": "stop"}


def openai_finish(reason: str) -> str:
    """Normalize a finish reason to OpenAI's vocabulary (Anthropic names are mapped, others kept)."""
    return _TO_OPENAI_FINISH.get(reason, reason)


def anthropic_stop(reason: str) -> str:
    return _TO_ANTHROPIC_STOP.get(reason, reason)


def _json(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def tool_call_id(call: ToolCall, protocol: Protocol, request_index: int, tool_index: int) -> str:
    if call.id:
        return call.id
    prefix = "toolu" if protocol == "anthropic" else "call"
    return f"{prefix}_fake{request_index}x{tool_index}"


# -- usage -----------------------------------------------------------------------------------


def openai_usage(u: Usage) -> dict[str, Any]:
    return {
        "prompt_tokens": u.prompt,
        "completion_tokens": u.completion,
        "total_tokens": u.prompt + u.completion,
        "prompt_tokens_details": {"cached_tokens": u.cache_read},
        "completion_tokens_details": {"reasoning_tokens": u.reasoning},
    }


def anthropic_input_usage(u: Usage) -> dict[str, Any]:
    return {
        "input_tokens": max(0, u.prompt - u.cache_read - u.cache_write),
        "cache_creation_input_tokens": u.cache_write,
        "cache_read_input_tokens": u.cache_read,
        "output_tokens": 1,
    }


# -- errors ----------------------------------------------------------------------------------

_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}


def error_body(
    protocol: Protocol, status: int, message: str, error_type: str | None = None
) -> bytes:
    """A provider-shaped JSON error body."""
    if protocol == "anthropic":
        kind = error_type or _ANTHROPIC_ERROR_TYPES.get(
            status, "api_error" if status >= 500 else "invalid_request_error"
        )
        return _json({"type": "error", "error": {"type": kind, "message": message}})
    if status == 429:
        kind, code = "requests", "rate_limit_exceeded"
    elif status >= 500:
        kind, code = "server_error", None
    else:
        kind, code = "invalid_request_error", "invalid_api_key" if status == 401 else None
    return _json(
        {"error": {"message": message, "type": error_type or kind, "param": None, "code": code}}
    )


# -- streaming -------------------------------------------------------------------------------


class _OpenAIStream:
    def __init__(self, request: RecordedRequest, model: str, usage: Usage | None) -> None:
        self.head = (
            b'{"id":"chatcmpl-fake%d","object":"chat.completion.chunk","created":%d,"model":%s,'
            % (request.index, int(time.time()), _json(model))
        )
        self.role_sent = False
        include = (request.body.get("stream_options") or {}).get("include_usage")
        self.usage = usage if include else None

    def _chunk(self, choices: bytes, extra: bytes = b"") -> bytes:
        return b"data: " + self.head + b'"choices":' + choices + extra + b"}\n\n"

    def _delta(self, delta: dict[str, Any], finish: str | None = None) -> bytes:
        if not self.role_sent:
            delta = {"role": "assistant", **delta}
            self.role_sent = True
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return self._chunk(_json([choice]))

    def begin(self) -> Iterator[bytes]:
        return iter(())

    def text(self, piece: str) -> Iterator[bytes]:
        yield self._delta({"content": piece})

    def reasoning(self, piece: str, signature: str | None) -> Iterator[bytes]:
        yield self._delta({"reasoning_content": piece})

    def tool_call(self, index: int, id_: str, name: str, pieces: list[str]) -> Iterator[bytes]:
        # Like OpenAI: the first fragment names the call, later ones carry only index + arguments.
        head = {
            "index": index,
            "id": id_,
            "type": "function",
            "function": {"name": name, "arguments": ""},
        }
        yield self._delta({"tool_calls": [head]})
        for piece in pieces:
            yield self._delta({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})

    def end(self, finish: str) -> Iterator[bytes]:
        yield self._delta({} if self.role_sent else {"content": ""}, openai_finish(finish))
        if self.usage is not None:
            yield self._chunk(b"[]", b',"usage":' + _json(openai_usage(self.usage)))
        yield b"data: [DONE]\n\n"


def _event(name: str, payload: dict[str, Any]) -> bytes:
    return b"event: " + name.encode() + b"\ndata: " + _json(payload) + b"\n\n"


class _AnthropicStream:
    def __init__(self, request: RecordedRequest, model: str, usage: Usage | None) -> None:
        self.request = request
        self.model = model
        self.usage = usage
        self.index = -1
        self.open: str | None = None  # type of the content block being streamed
        self.signature: str | None = None

    def begin(self) -> Iterator[bytes]:
        message: dict[str, Any] = {
            "id": f"msg_fake{self.request.index}",
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
        }
        if self.usage is not None:
            message["usage"] = anthropic_input_usage(self.usage)
        yield _event("message_start", {"type": "message_start", "message": message})
        yield _event("ping", {"type": "ping"})

    def _close(self) -> Iterator[bytes]:
        if self.open is None:
            return
        if self.open == "thinking":
            sig = {"type": "signature_delta", "signature": self.signature or FAKE_SIGNATURE}
            yield self._delta(sig)
        yield _event("content_block_stop", {"type": "content_block_stop", "index": self.index})
        self.open, self.signature = None, None

    def _start(self, block: dict[str, Any]) -> Iterator[bytes]:
        yield from self._close()
        self.index += 1
        self.open = block["type"]
        payload = {"type": "content_block_start", "index": self.index, "content_block": block}
        yield _event("content_block_start", payload)

    def _delta(self, delta: dict[str, Any]) -> bytes:
        payload = {"type": "content_block_delta", "index": self.index, "delta": delta}
        return _event("content_block_delta", payload)

    def text(self, piece: str) -> Iterator[bytes]:
        if self.open != "text":
            yield from self._start({"type": "text", "text": ""})
        yield self._delta({"type": "text_delta", "text": piece})

    def reasoning(self, piece: str, signature: str | None) -> Iterator[bytes]:
        if self.open != "thinking":
            yield from self._start({"type": "thinking", "thinking": "", "signature": ""})
        self.signature = signature or self.signature
        yield self._delta({"type": "thinking_delta", "thinking": piece})

    def tool_call(self, index: int, id_: str, name: str, pieces: list[str]) -> Iterator[bytes]:
        yield from self._start({"type": "tool_use", "id": id_, "name": name, "input": {}})
        for piece in ["", *pieces]:  # the real API opens with an empty partial_json
            yield self._delta({"type": "input_json_delta", "partial_json": piece})

    def end(self, finish: str) -> Iterator[bytes]:
        yield from self._close()
        delta: dict[str, Any] = {
            "type": "message_delta",
            "delta": {"stop_reason": anthropic_stop(finish), "stop_sequence": None},
        }
        if self.usage is not None:
            delta["usage"] = {"output_tokens": self.usage.completion}
        yield _event("message_delta", delta)
        yield _event("message_stop", {"type": "message_stop"})


def response_model(turn: Turn, request: RecordedRequest) -> str:
    return turn.model or str(request.body.get("model") or "fake-model")


def stream(turn: Turn, request: RecordedRequest) -> Iterator[Action]:
    """The streaming response to `request`, as write / sleep / drop actions."""
    cls = _AnthropicStream if request.protocol == "anthropic" else _OpenAIStream
    enc = cls(request, response_model(turn, request), turn.usage_for(request))
    yield from enc.begin()
    tools = 0
    for ev in turn.events:
        if isinstance(ev, Text):
            for piece in ev.pieces():
                yield from enc.text(piece)
        elif isinstance(ev, Reasoning):
            for piece in ev.pieces():
                yield from enc.reasoning(piece, ev.signature)
        elif isinstance(ev, ToolCall):
            id_ = tool_call_id(ev, request.protocol, request.index, tools)
            yield from enc.tool_call(tools, id_, ev.name, ev.pieces())
            tools += 1
        else:  # the server's own (a pause, a drop): it stops reading here if it must
            yield ev
    yield from enc.end(turn.finish_reason)


# -- non-streaming ---------------------------------------------------------------------------


def complete(turn: Turn, request: RecordedRequest) -> bytes:
    """The non-streaming JSON body answering `request` (delays and drops are the handler's job)."""
    model = response_model(turn, request)
    usage = turn.usage_for(request)
    calls = [
        (tool_call_id(c, request.protocol, request.index, i), c)
        for i, c in enumerate(turn.tool_calls)
    ]
    text = "".join(e.text for e in turn.events if isinstance(e, Text))
    thinking = [e for e in turn.events if isinstance(e, Reasoning)]
    if request.protocol == "anthropic":
        content: list[dict[str, Any]] = []
        if thinking:
            signature = next((e.signature for e in reversed(thinking) if e.signature), None)
            content.append(
                {
                    "type": "thinking",
                    "thinking": "".join(e.text for e in thinking),
                    "signature": signature or FAKE_SIGNATURE,
                }
            )
        if text:
            content.append({"type": "text", "text": text})
        for id_, c in calls:
            try:
                args = json.loads(c.arguments) if c.arguments else {}
            except ValueError:
                args = c.arguments  # malformed on purpose: hand it over as it is
            content.append({"type": "tool_use", "id": id_, "name": c.name, "input": args})
        body: dict[str, Any] = {
            "id": f"msg_fake{request.index}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": anthropic_stop(turn.finish_reason),
            "stop_sequence": None,
        }
        if usage is not None:
            body["usage"] = {**anthropic_input_usage(usage), "output_tokens": usage.completion}
        return _json(body)
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if thinking:
        message["reasoning_content"] = "".join(e.text for e in thinking)
    if calls:
        message["tool_calls"] = [
            {"id": id_, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for id_, c in calls
        ]
    body = {
        "id": f"chatcmpl-fake{request.index}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": openai_finish(turn.finish_reason),
            }
        ],
    }
    if usage is not None:
        body["usage"] = openai_usage(usage)
    return _json(body)
