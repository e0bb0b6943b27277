"""What a turn has shown so far, and the ops not yet sent: the kernel side of the widget.

``TurnState`` is the source of snapshots (a view that renders late, a reloaded page, the text
fallback); ``Pending`` coalesces what changed since the last flush (the latest row per id,
streamed fragments concatenated), so a fast stream costs a bounded number of widget messages.
Both are plain data: this module imports nothing heavy, so the live widget can show before
the model client has loaded.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .ops import Op

OUTPUT_TAIL = 64 * 1024  # characters of live tool output kept per part for snapshots

# The permission events a tool card explains itself with (who denied it, under which rule).
DECISION_EVENTS = ("permission.asked", "permission.answered", "permission.denied")


class TurnState:
    """Everything the turn has shown so far: the source of snapshots and of the text fallback."""

    def __init__(self) -> None:
        self.messages: dict[str, dict[str, Any]] = {}
        self.parts: dict[str, dict[str, Any]] = {}
        self.chunks: dict[str, list[str]] = {}  # streamed fragments since the part's last row
        self.outputs: dict[str, list[tuple[str, str]]] = {}
        self.output_chars: dict[str, int] = {}
        self.displays: dict[str, list[dict[str, Any]]] = {}
        self.approvals: dict[str, dict[str, Any]] = {}
        self.decisions: dict[str, dict[str, Any]] = {}  # tool part id → how permission decided
        self.asked: dict[str, str] = {}  # approval request id → tool part id
        self.notices: list[dict[str, Any]] = []
        self.status: dict[str, Any] = {"status": "busy", "detail": {}}
        self.user_messages: set[str] = set()
        self.done = False

    def text_of(self, part_id: str, field: str = "text") -> str:
        row = self.parts.get(part_id, {})
        return (row.get(field) or "") + "".join(self.chunks.get(part_id, ()))

    def part_row(self, part_id: str) -> dict[str, Any]:
        row = dict(self.parts[part_id])
        if self.chunks.get(part_id):
            row["text"] = self.text_of(part_id)
        return row

    def snapshot_ops(self) -> list[Op]:
        """The ops that rebuild this state (notebook/ops.py declares them)."""
        ops: list[Op] = [{"op": "status", **self.status}]
        ops += [{"op": "notice", **n} for n in self.notices]
        ops += [{"op": "message", "message": self.messages[k]} for k in sorted(self.messages)]
        ops += [{"op": "part", "part": self.part_row(k)} for k in sorted(self.parts)]
        ops += [{"op": "decision", "id": k, **d} for k, d in self.decisions.items()]
        for pid, pieces in self.outputs.items():
            for stream, text in pieces:
                ops.append({"op": "output", "id": pid, "stream": stream, "text": text})
        for pid, bundles in self.displays.items():
            ops += [{"op": "display", "id": pid, "data": b} for b in bundles]
        for a in self.approvals.values():
            ops.append({"op": "approval", "request": a["request"]})
            if a["answer"] is not None:
                ops.append({"op": "answered", "id": a["request"]["id"], "answer": a["answer"],
                            "reason": a["reason"], "text": a.get("text")})
        if self.done:
            ops.append({"op": "done"})
        return ops

    def messages_with_parts(self) -> list[Any]:
        """The turn rebuilt as Message objects (when the caller has no stored copy)."""
        from ..message import Message, part_from_json

        out = []
        for mid in sorted(self.messages):
            m = Message.model_validate(self.messages[mid])
            m.parts = [part_from_json(self.part_row(pid)) for pid in sorted(self.parts)
                       if self.parts[pid].get("message_id") == mid]
            out.append(m)
        return out

    def turn_messages(self, messages: Any = None) -> list[Any]:
        """This turn's messages out of ``messages`` (a Message or a list, e.g. what the run
        returned or the store holds): those seen live, else the latest turn among them; with
        none given, the turn rebuilt from what was seen."""
        from ..message import Message

        if messages is None:
            return self.messages_with_parts()
        messages = [messages] if isinstance(messages, Message) else list(messages)
        seen = set(self.messages)
        if seen and any(m.id in seen for m in messages):
            return [m for m in messages if m.id in seen]
        # Nothing seen live (an error before the run wrote anything): the latest turn.
        users = [i for i, m in enumerate(messages) if m.role == "user"]
        return messages[users[-1]:] if users else messages

    # -- bus events → state + pending ops ---------------------------------------------------

    def ingest(self, ev: Any, pend: Pending) -> None:
        """Fold one bus event into the state and queue what a view must be told."""
        handler = _handlers().get(type(ev))
        if handler is not None:
            handler(self, ev, pend)

    def _delta(self, ev: Any, pend: Pending) -> None:
        if ev.part_id in self.parts:
            self.chunks.setdefault(ev.part_id, []).append(ev.delta)
            pend.delta(ev)

    def _part(self, ev: Any, pend: Pending) -> None:
        from ..message import CompactionPart

        part = ev.part
        if part.message_id in self.user_messages and not isinstance(part, CompactionPart):
            return
        row = part.to_json()
        self.parts[part.id] = row
        self.chunks.pop(part.id, None)
        pend.part(row)

    def _message(self, ev: Any, pend: Pending) -> None:
        from ..message import CompactionPart

        m = ev.message
        row = m.to_json()
        self.messages[m.id] = row
        pend.message(row)
        if m.role == "user":
            self.user_messages.add(m.id)
        for part in m.parts:  # parts written with a new message (a compaction request)
            if part.id not in self.parts and (m.role == "assistant" or isinstance(part, CompactionPart)):
                prow = part.to_json()
                self.parts[part.id] = prow
                pend.part(prow)

    def _status(self, ev: Any, pend: Pending) -> None:
        if ev.status == "notice":
            notice = {"message": str(ev.detail.get("message", "")), "level": "info"}
            self.notices.append(notice)
            pend.once({"op": "notice", **notice})
        else:
            self.status = {"status": ev.status, "detail": dict(ev.detail)}
            pend.status(self.status)

    def _output(self, ev: Any, pend: Pending) -> None:
        pieces = self.outputs.setdefault(ev.part_id, [])
        pieces.append((ev.stream, ev.text))
        self.output_chars[ev.part_id] = self.output_chars.get(ev.part_id, 0) + len(ev.text)
        while self.output_chars[ev.part_id] > OUTPUT_TAIL and len(pieces) > 1:
            self.output_chars[ev.part_id] -= len(pieces.pop(0)[1])
        pend.output(ev.part_id, ev.stream, ev.text)

    def _display(self, ev: Any, pend: Pending) -> None:
        self.displays.setdefault(ev.part_id, []).append(ev.data)
        pend.once({"op": "display", "id": ev.part_id, "data": ev.data})

    def _asked(self, ev: Any, pend: Pending) -> None:
        request = {"id": ev.request_id, "part_id": ev.part_id, "tool": ev.tool,
                   "input": ev.input, "rule": ev.rule}
        self.approvals[ev.request_id] = {"request": request, "answer": None, "reason": None}
        self.asked[ev.request_id] = ev.part_id
        pend.once({"op": "approval", "request": request})

    def _answered(self, ev: Any, pend: Pending) -> None:
        a = self.approvals.get(ev.request_id)
        if a is not None:
            a["answer"], a["reason"] = ev.answer, ev.reason
        pend.once({"op": "answered", "id": ev.request_id, "answer": ev.answer,
                   "reason": ev.reason})

    def _question(self, ev: Any, pend: Pending) -> None:
        """The question tool's card travels as an approval of kind "question": the same slot
        in snapshots, the same header state, its own buttons (labextension/src/render/view.ts)."""
        request = {"id": ev.request_id, "part_id": ev.part_id, "tool": "question",
                   "kind": "question", "question": ev.question, "options": list(ev.options)}
        self.approvals[ev.request_id] = {"request": request, "answer": None, "reason": None}
        pend.once({"op": "approval", "request": request})

    def _question_answered(self, ev: Any, pend: Pending) -> None:
        answer = "answered" if ev.text is not None else "unanswered"
        a = self.approvals.get(ev.request_id)
        if a is not None:
            a["answer"], a["reason"], a["text"] = answer, ev.reason, ev.text
        pend.once({"op": "answered", "id": ev.request_id, "answer": answer, "reason": ev.reason,
                   "text": ev.text, "by": ev.by})

    def _event(self, ev: Any, pend: Pending) -> None:
        """Permission events say who decided a call: the card names them (a denied call is
        "denied by you in the widget", "by rule python:*=deny", "by forge: no one could
        answer"), not a bare "error"."""
        event = ev.event
        if event.type not in DECISION_EVENTS:
            return
        data = event.data or {}
        if event.type == "permission.asked":
            if data.get("request_id") and data.get("part_id"):
                self.asked[str(data["request_id"])] = str(data["part_id"])
            return
        part_id = data.get("part_id") or self.asked.get(str(data.get("request_id")))
        if not part_id:
            return
        if event.type == "permission.denied":
            decision = {"answer": "deny", "by": "rule", "rule": data.get("rule"),
                        "reason": data.get("reason")}
        else:
            decision = {"answer": data.get("answer"), "by": event.actor,
                        "reason": data.get("reason")}
        self.decisions[str(part_id)] = decision
        pend.once({"op": "decision", "id": str(part_id), **decision})


_HANDLERS: dict[type, Callable[[TurnState, Any, Pending], None]] = {}


def _handlers() -> dict[type, Callable[[TurnState, Any, Pending], None]]:
    """Bus event type → TurnState method; the bus is imported on the first event, not before."""
    if not _HANDLERS:
        from ..bus import (
            ApprovalAnswered,
            ApprovalRequested,
            DisplayData,
            EventRecorded,
            MessageUpdated,
            PartDelta,
            PartUpdated,
            QuestionAnswered,
            QuestionAsked,
            SessionStatus,
            ToolOutput,
        )

        _HANDLERS.update({
            PartDelta: TurnState._delta, PartUpdated: TurnState._part,
            MessageUpdated: TurnState._message, SessionStatus: TurnState._status,
            ToolOutput: TurnState._output, DisplayData: TurnState._display,
            ApprovalRequested: TurnState._asked, ApprovalAnswered: TurnState._answered,
            EventRecorded: TurnState._event,
            QuestionAsked: TurnState._question, QuestionAnswered: TurnState._question_answered,
        })
    return _HANDLERS


def event_types() -> tuple[type, ...]:
    """The bus events a turn's view follows."""
    return tuple(_handlers())


class Pending:
    """Ops since the last flush, coalesced: the latest row per id, fragments concatenated.

    ``slots`` keeps them in first-seen order, keyed by what they are: ``("message", id)``,
    ``("part", id)`` (its latest row and the fragments after it), ``("output", part id,
    stream)``, ``("status",)`` (always last) and ``("once", n)`` (an op sent as it is).
    """

    def __init__(self) -> None:
        self.slots: dict[Any, Any] = {}
        self._n = 0

    def __bool__(self) -> bool:
        return bool(self.slots)

    def message(self, row: dict[str, Any]) -> None:
        self.slots[("message", row["id"])] = row

    def part(self, row: dict[str, Any]) -> None:
        slot = self.slots.setdefault(("part", row["id"]), {"row": None, "delta": [], "field": "text"})
        slot["row"], slot["delta"] = row, []  # a full row replaces what the fragments built

    def delta(self, ev: Any) -> None:
        slot = self.slots.setdefault(("part", ev.part_id),
                                     {"row": None, "delta": [], "field": ev.field,
                                      "message_id": ev.message_id})
        slot["delta"].append(ev.delta)
        slot["field"] = ev.field
        slot["message_id"] = ev.message_id

    def output(self, part_id: str, stream: str, text: str) -> None:
        self.slots.setdefault(("output", part_id, stream), []).append(text)

    def status(self, status: dict[str, Any]) -> None:
        self.slots.pop(("status",), None)  # re-inserted last: a status follows what led to it
        self.slots[("status",)] = status

    def once(self, op: dict[str, Any]) -> None:
        self._n += 1
        self.slots[("once", self._n)] = op

    def drain(self) -> list[Op]:
        ops: list[Op] = []
        for key, value in self.slots.items():
            kind = key[0]
            if kind == "message":
                ops.append({"op": "message", "message": value})
            elif kind == "part":
                if value["row"] is not None:
                    ops.append({"op": "part", "part": value["row"]})
                if value["delta"]:
                    ops.append({"op": "delta", "id": key[1], "message_id": value.get("message_id"),
                                "field": value["field"], "text": "".join(value["delta"])})
            elif kind == "output":
                text = "".join(value)
                ops.append({"op": "output", "id": key[1], "stream": key[2],
                            "text": text[-OUTPUT_TAIL:]})
            elif kind == "status":
                ops.append({"op": "status", **value})
            else:
                ops.append(value)
        self.slots.clear()
        return ops
