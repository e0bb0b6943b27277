"""The bus → OpenTelemetry spans, after the GenAI semantic conventions (docs/tracing.md).

One subscriber of the Forge's bus turns what the write entry publishes into spans: a turn
(the session busy → idle) is ``invoke_agent``, each model step (StepStartPart →
StepFinishPart) a ``chat`` span under it, each tool call (running → completed | error) an
``execute_tool`` span, each RetryPart a ``retry`` span under its step (to the next attempt),
a compaction (its CompactionPart → its ``compaction`` event) a ``compaction`` span holding the
summary's step. A subagent's turn (``task``) hangs under the tool call that started it, found
by the SubtaskPart's child session id. The rows the bus carries are the store's, scrubbed by
the write entry, so a span says what the history DataFrames say — the same ids, tokens, costs.

Content (prompts, answers, tool arguments and results) stays out unless ``content`` is on.
Spans are only built here; exporting them is the processor's job, in its own thread.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer

from ..bus import EventRecorded, MessageUpdated, PartUpdated, SessionStatus
from ..message import (
    CompactionPart,
    ErrorInfo,
    Message,
    RetryPart,
    StepFinishPart,
    StepStartPart,
    SubtaskPart,
    TextPart,
    ToolPart,
)

EVENTS = (SessionStatus, MessageUpdated, PartUpdated, EventRecorded)  # what the recorder reads
CONTENT_LIMIT = 16_000  # characters of one captured text: collectors refuse huge attributes


def _ns(seconds: float | None) -> int:
    return time.time_ns() if seconds is None else int(seconds * 1e9)


def _provider(model: str | None, provider: str | None) -> str:
    # litellm's "openai/gpt-4o" names its provider first; the conventions' word for none known
    if provider:
        return provider
    return model.split("/", 1)[0] if model and "/" in model else "_OTHER"


def _model_name(model: str, provider: str) -> str:
    # the conventions' model is the provider's name for it: litellm's route prefix left out
    head, _, rest = model.partition("/")
    return rest if rest and head == provider else model


def _clip(text: str) -> str:
    return text if len(text) <= CONTENT_LIMIT else text[:CONTENT_LIMIT] + "… [clipped]"


def _messages(role: str, text: str, finish: str | None = None) -> str:
    """The conventions' JSON form of one message with one text part."""
    entry: dict[str, Any] = {"role": role, "parts": [{"type": "text", "content": _clip(text)}]}
    if finish:
        entry["finish_reason"] = finish
    return json.dumps([entry], ensure_ascii=False)


def _failed(span: Span, error: ErrorInfo, *, content: bool = True) -> None:
    span.set_attribute("error.type", error.type)
    span.add_event("exception", {"exception.type": error.type,
                                 **({"exception.message": error.message} if content else {})})
    span.set_status(Status(StatusCode.ERROR, error.message if content else error.type))


@dataclass
class _Turn:
    """What one session's running turn has open."""

    span: Span
    first_prompt: bool = True
    assistants: dict[str, Message] = field(default_factory=dict)  # the turn's answers, latest row
    chats: dict[str, Span] = field(default_factory=dict)  # message id → its open step
    outputs: dict[str, list[str]] = field(default_factory=dict)  # message id → the step's texts
    retries: dict[str, Span] = field(default_factory=dict)  # message id → its waiting retry
    tools: dict[str, tuple[Span, ToolPart]] = field(default_factory=dict)  # part id → call
    compactions: dict[str, Span] = field(default_factory=dict)  # request message id → span
    parts_seen: set[str] = field(default_factory=set)  # parts written once (step, subtask, …)


class SpanRecorder:
    """A bus subscriber: ``bus.subscribe(SpanRecorder(tracer), types=EVENTS)``."""

    def __init__(self, tracer: Tracer, *, content: bool = False) -> None:
        self.tracer = tracer
        self.content = content
        self._turns: dict[str, _Turn] = {}
        self._children: dict[str, Span] = {}  # child session id → the task call that runs it
        self._lock = threading.Lock()  # the bus publishes from the loop, rarely from a thread

    def __call__(self, event: Any) -> None:
        with self._lock:
            if isinstance(event, PartUpdated):
                turn = self._turns.get(event.part.session_id)
                if turn is not None:
                    self._part(turn, event.part)
            elif isinstance(event, MessageUpdated):
                turn = self._turns.get(event.message.session_id)
                if turn is not None:
                    self._message(turn, event.message)
            elif isinstance(event, SessionStatus):
                self._status(event)
            elif isinstance(event, EventRecorded):
                turn = self._turns.get(event.event.session_id or "")
                if turn is not None and event.event.type == "compaction":
                    self._compacted(turn, event.event.data)

    def close(self) -> None:
        """End whatever is still open (the Forge closes mid-turn): nothing leaks unended."""
        with self._lock:
            for sid in list(self._turns):
                self._finish(sid)

    # -- the turn -----------------------------------------------------------------------------

    def _start(self, sid: str) -> Span:
        parent = self._children.pop(sid, None)
        context = trace.set_span_in_context(parent) if parent is not None else None
        return self.tracer.start_span("invoke_agent", context=context, kind=SpanKind.INTERNAL,
                                      attributes={"gen_ai.operation.name": "invoke_agent",
                                                  "gen_ai.conversation.id": sid,
                                                  "forge.session.id": sid})

    def _status(self, event: SessionStatus) -> None:
        sid, turn = event.session_id, self._turns.get(event.session_id)
        if event.status == "busy":
            if turn is None:
                self._turns[sid] = _Turn(self._start(sid))
            else:  # the retry's wait is over: its next attempt begins
                for mid in list(turn.retries):
                    turn.retries.pop(mid).end()
        elif event.status == "idle" and turn is not None:
            self._finish(sid)

    def _finish(self, sid: str) -> None:
        turn = self._turns.pop(sid)
        for span in (*turn.retries.values(), *turn.chats.values(), *turn.compactions.values()):
            span.end()
        for span, _part in turn.tools.values():  # a call the turn left open (an abort)
            span.set_attribute("forge.tool.state", "unfinished")
            span.end()
        span = turn.span
        answers = list(turn.assistants.values())
        if answers:
            last = answers[-1]
            tokens = [m.tokens for m in answers]
            span.set_attributes({
                "gen_ai.usage.input_tokens": sum(t.input for t in tokens),
                "gen_ai.usage.output_tokens": sum(t.output for t in tokens),
                "forge.cost_usd": sum(m.cost or 0.0 for m in answers),
                "forge.message.id": last.id,
                "forge.message.status": last.status,
            })
            if last.finish:
                span.set_attribute("gen_ai.response.finish_reasons", [last.finish])
            if last.error is not None and last.status == "error":
                _failed(span, last.error)
            if self.content and last.text:
                span.set_attribute("gen_ai.output.messages",
                                   _messages("assistant", last.text, last.finish))
        span.end()

    def _message(self, turn: _Turn, message: Message) -> None:
        if message.role == "user":
            asks = any(isinstance(p, CompactionPart) for p in message.parts)
            if turn.first_prompt and not asks:  # the person's prompt, not a compaction's ask
                turn.first_prompt = False
                self._prompt(turn.span, message)
        else:
            first = message.id not in turn.assistants
            turn.assistants[message.id] = message
            if first:
                turn.span.update_name(f"invoke_agent {message.agent}")
                turn.span.set_attributes({
                    "gen_ai.agent.name": message.agent,
                    "gen_ai.provider.name": (
                        provider := _provider(message.model, message.provider)),
                    "gen_ai.system": provider,  # its name before the conventions' 1.37
                    **({"gen_ai.request.model": _model_name(message.model, provider),
                        "forge.model": message.model} if message.model else {}),
                    **({"forge.replayed": True} if message.replay_of else {}),
                })
            if message.is_terminal:
                self._answered(turn, message)
        for part in message.parts:  # a message written whole carries its parts (no PartUpdated)
            self._part(turn, part)

    def _prompt(self, span: Span, message: Message) -> None:
        origin = message.origin or {}
        for key in ("notebook", "path", "cell_id", "execution_count"):
            value = origin.get(key)
            if isinstance(value, str | int) and not isinstance(value, bool):
                span.set_attribute(f"forge.notebook.{'path' if key == 'notebook' else key}",
                                   value)
        if self.content and message.text:
            span.set_attribute("gen_ai.input.messages", _messages("user", message.text))

    def _answered(self, turn: _Turn, message: Message) -> None:
        """A terminal answer: its step, if one is still open, ended there (a failed call)."""
        chat = turn.chats.pop(message.id, None)
        retry = turn.retries.pop(message.id, None)
        if retry is not None:
            retry.end()
        if chat is not None:
            if message.error is not None:
                _failed(chat, message.error)
            chat.end(_ns(message.completed_at))

    # -- parts --------------------------------------------------------------------------------

    def _part(self, turn: _Turn, part: Any) -> None:
        if isinstance(part, ToolPart):
            self._tool(turn, part)
        elif isinstance(part, TextPart):
            if self.content and part.is_terminal and part.text and part.message_id in turn.chats:
                turn.outputs.setdefault(part.message_id, []).append(part.text)
        elif part.id in turn.parts_seen:
            return
        elif isinstance(part, StepStartPart | StepFinishPart | RetryPart | SubtaskPart
                        | CompactionPart):
            turn.parts_seen.add(part.id)
            if isinstance(part, StepStartPart):
                self._step_start(turn, part)
            elif isinstance(part, StepFinishPart):
                self._step_finish(turn, part)
            elif isinstance(part, RetryPart):
                self._retry(turn, part)
            elif isinstance(part, SubtaskPart):
                self._subtask(turn, part)
            else:
                self._compaction(turn, part)

    def _step_start(self, turn: _Turn, part: StepStartPart) -> None:
        message = turn.assistants.get(part.message_id)
        parent = turn.span
        if message is not None and message.summary:  # a compaction's summary step
            parent = turn.compactions.get(message.parent_id or "", parent)
        model = part.model or (message.model if message is not None else None)
        provider = _provider(model, message.provider if message is not None else None)
        old = turn.chats.pop(part.message_id, None)
        if old is not None:  # a step that never finished (cannot happen in order; never leak)
            old.end()
        turn.outputs.pop(part.message_id, None)
        name = _model_name(model, provider) if model else None
        turn.chats[part.message_id] = self.tracer.start_span(
            f"chat {name}" if name else "chat", context=trace.set_span_in_context(parent),
            kind=SpanKind.CLIENT, start_time=_ns(part.created_at), attributes={
                "gen_ai.operation.name": "chat", "gen_ai.provider.name": provider,
                "gen_ai.system": provider,
                **({"gen_ai.request.model": name, "forge.model": model} if model else {}),
                "gen_ai.conversation.id": part.session_id, "forge.message.id": part.message_id})

    def _step_finish(self, turn: _Turn, part: StepFinishPart) -> None:
        retry = turn.retries.pop(part.message_id, None)
        if retry is not None:
            retry.end()
        chat = turn.chats.pop(part.message_id, None)
        if chat is None:
            return
        t = part.tokens
        chat.set_attributes({
            "gen_ai.usage.input_tokens": t.input, "gen_ai.usage.output_tokens": t.output,
            "gen_ai.usage.cache_read.input_tokens": t.cache_read,
            "gen_ai.usage.cache_creation.input_tokens": t.cache_write,
            "forge.usage.reasoning_tokens": t.reasoning, "forge.usage.estimated": t.estimated,
            "forge.cost_usd": part.cost or 0.0,
            **({"gen_ai.response.model": _model_name(part.model, _provider(part.model, None))}
               if part.model else {}),
            **({"gen_ai.response.finish_reasons": [part.reason]} if part.reason else {}),
            **({"forge.stopped_by": part.stopped_by_forge} if part.stopped_by_forge else {}),
        })
        texts = turn.outputs.pop(part.message_id, None)
        if self.content and texts:
            chat.set_attribute("gen_ai.output.messages",
                               _messages("assistant", "\n\n".join(texts), part.reason))
        chat.end(_ns(part.created_at))

    def _retry(self, turn: _Turn, part: RetryPart) -> None:
        old = turn.retries.pop(part.message_id, None)
        if old is not None:
            old.end()
        parent = turn.chats.get(part.message_id, turn.span)
        span = self.tracer.start_span("retry", context=trace.set_span_in_context(parent),
                                      start_time=_ns(part.created_at), attributes={
                                          "forge.retry.attempt": part.attempt,
                                          "forge.retry.wait_s": part.wait})
        # the error is a model server's status line (describe()), not the person's content
        span.add_event("exception", {"exception.type": "retry",
                                     "exception.message": _clip(part.error)})
        turn.retries[part.message_id] = span

    def _tool(self, turn: _Turn, part: ToolPart) -> None:
        if part.state == "pending":
            return
        held = turn.tools.get(part.id)
        if held is None:
            if part.id in turn.parts_seen:  # ended already
                return
            turn.parts_seen.add(part.id)
            span = self.tracer.start_span(
                f"execute_tool {part.tool}", context=trace.set_span_in_context(turn.span),
                kind=SpanKind.INTERNAL, start_time=_ns(part.time_start), attributes={
                    "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": part.tool,
                    "gen_ai.tool.call.id": part.call_id, "gen_ai.tool.type": "function",
                    "gen_ai.conversation.id": part.session_id,
                    "forge.message.id": part.message_id, "forge.part.id": part.id})
            if self.content:
                span.set_attribute("gen_ai.tool.call.arguments",
                                   _clip(part.raw_input or json.dumps(part.input, default=str)))
        else:
            span = held[0]
        turn.tools[part.id] = (span, part)
        if not part.is_terminal:
            return
        del turn.tools[part.id]
        span.set_attribute("forge.tool.state", part.state)
        if part.state == "error":
            kind = "doom_loop" if part.doom_loop else "tool_error"
            _failed(span, ErrorInfo(type=kind, message=part.error or ""), content=self.content)
        elif self.content and part.output is not None:
            span.set_attribute("gen_ai.tool.call.result", _clip(part.output))
        span.end(_ns(part.time_end))

    def _subtask(self, turn: _Turn, part: SubtaskPart) -> None:
        if part.child_session_id is None:
            return
        calls = [(span, p) for span, p in turn.tools.values()
                 if p.tool == "task" and p.message_id == part.message_id]
        # parallel task calls of one step: the one whose prompt this subtask carries
        matching = [span for span, p in calls if p.input.get("prompt") == part.prompt]
        chosen = (matching or [span for span, _p in calls] or [turn.span])[0]
        self._children[part.child_session_id] = chosen

    def _compaction(self, turn: _Turn, part: CompactionPart) -> None:
        turn.compactions[part.message_id] = self.tracer.start_span(
            "compaction", context=trace.set_span_in_context(turn.span),
            start_time=_ns(part.created_at), attributes={
                "gen_ai.conversation.id": part.session_id, "forge.compaction.auto": part.auto,
                "forge.message.id": part.message_id})

    def _compacted(self, turn: _Turn, data: dict[str, Any]) -> None:
        span = turn.compactions.pop(str(data.get("request_message_id")), None)
        if span is None:
            return
        for key in ("tokens_before", "tokens_after"):
            if isinstance(data.get(key), int):
                span.set_attribute(f"forge.compaction.{key}", data[key])
        span.set_attribute("forge.compaction.extractive", bool(data.get("extractive")))
        span.end()
