"""The live widget of a turn: bus events, coalesced, into an anywidget front end (DESIGN §7).

Front end: ``js/widget/`` (anywidget ESM, marked + DOMPurify), bundled into
``forge_jupyter/static/widget.js`` + ``widget.css``, which are committed. Rebuild with

    cd js/widget && npm ci && npm run build

Protocol (custom widget messages, never a growing trait — every trait change resends it whole):

- kernel → view ``{"kind": "batch", "seq": n, "ops": [...]}``, at most ``throttle_hz`` a second
  whatever the token rate (jupyter_server drops iopub above 1,000 msg/s), and
  ``{"kind": "snapshot", "seq": n, "ops": [...]}``: the whole state, answering a view's
  ``ready`` (it rendered: a first view, a reload, a second view) or ``hello`` (it missed a
  batch). Ops: ``message`` (full row), ``part`` (full row, latest per id), ``delta`` (text
  fragments of one part, concatenated), ``status``, ``output`` (live tool output), ``display``,
  ``approval``, ``answered``, ``notice``, ``done``. A part's full row replaces what deltas
  built, so the final text is exactly the stored one.
- view → kernel ``{"type": "ready" | "hello" | "stop"}`` and
  ``{"type": "approve", "request_id", "answer": "once" | "session" | "deny", "reason"}``.

When no view says ``ready`` within ~1.5 s (nbclient, nbconvert, a frontend without widgets),
or outside a kernel, or with ``FORGE_WIDGET=off``, the turn streams as plain text instead.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import anywidget
import traitlets

from .. import render
from ..bus import (
    ApprovalAnswered,
    ApprovalRequested,
    DisplayData,
    MessageUpdated,
    PartDelta,
    PartUpdated,
    SessionStatus,
    ToolOutput,
)
from ..model import CompactionPart, Message, part_from_json

log = logging.getLogger(__name__)

STATIC = Path(__file__).resolve().parent.parent / "static"
READY_TIMEOUT = 1.5  # seconds for a view to say it rendered before the turn goes to text
OUTPUT_TAIL = 64 * 1024  # characters of live tool output kept per part for snapshots
TEXT_MODE_ENV = "FORGE_WIDGET"

_EVENTS = (MessageUpdated, PartUpdated, PartDelta, SessionStatus, ToolOutput, DisplayData,
           ApprovalRequested, ApprovalAnswered)


class TurnWidget(anywidget.AnyWidget):
    """One turn's live view; its state travels as custom messages (see the module docstring)."""

    _esm = STATIC / "widget.js"
    _css = STATIC / "widget.css"
    session_id = traitlets.Unicode("").tag(sync=True)


# --------------------------------------------------------------------------- turn state


class TurnState:
    """Everything the turn has shown so far: the source of snapshots and of text fallback."""

    def __init__(self) -> None:
        self.messages: dict[str, dict[str, Any]] = {}
        self.parts: dict[str, dict[str, Any]] = {}
        self.chunks: dict[str, list[str]] = {}  # streamed fragments since the part's last row
        self.outputs: dict[str, list[tuple[str, str]]] = {}
        self.output_chars: dict[str, int] = {}
        self.displays: dict[str, list[dict[str, Any]]] = {}
        self.approvals: dict[str, dict[str, Any]] = {}
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

    def snapshot_ops(self) -> list[dict[str, Any]]:
        ops: list[dict[str, Any]] = [{"op": "status", **self.status}]
        ops += [{"op": "notice", **n} for n in self.notices]
        ops += [{"op": "message", "message": self.messages[k]} for k in sorted(self.messages)]
        ops += [{"op": "part", "part": self.part_row(k)} for k in sorted(self.parts)]
        for pid, pieces in self.outputs.items():
            for stream, text in pieces:
                ops.append({"op": "output", "id": pid, "stream": stream, "text": text})
        for pid, bundles in self.displays.items():
            ops += [{"op": "display", "id": pid, "data": b} for b in bundles]
        for a in self.approvals.values():
            ops.append({"op": "approval", "request": a["request"]})
            if a["answer"] is not None:
                ops.append({"op": "answered", "id": a["request"]["id"], "answer": a["answer"],
                            "reason": a["reason"]})
        if self.done:
            ops.append({"op": "done"})
        return ops

    def messages_with_parts(self) -> list[Message]:
        """The turn rebuilt as Message objects (when the caller has no stored copy)."""
        out = []
        for mid in sorted(self.messages):
            m = Message.model_validate(self.messages[mid])
            m.parts = [part_from_json(self.part_row(pid)) for pid in sorted(self.parts)
                       if self.parts[pid].get("message_id") == mid]
            out.append(m)
        return out


class Pending:
    """Ops since the last flush, coalesced: the latest row per id, fragments concatenated."""

    def __init__(self) -> None:
        self.slots: dict[Any, Any] = {}
        self._n = 0

    def __bool__(self) -> bool:
        return bool(self.slots)

    def message(self, row: dict[str, Any]) -> None:
        self.slots[("m", row["id"])] = row

    def part(self, row: dict[str, Any]) -> None:
        slot = self.slots.setdefault(("p", row["id"]), {"row": None, "delta": [], "field": "text"})
        slot["row"], slot["delta"] = row, []  # a full row replaces what the fragments built

    def delta(self, ev: PartDelta) -> None:
        slot = self.slots.setdefault(("p", ev.part_id),
                                     {"row": None, "delta": [], "field": ev.field,
                                      "message_id": ev.message_id})
        slot["delta"].append(ev.delta)
        slot["field"] = ev.field
        slot["message_id"] = ev.message_id

    def output(self, part_id: str, stream: str, text: str) -> None:
        self.slots.setdefault(("o", part_id, stream), []).append(text)

    def status(self, status: dict[str, Any]) -> None:
        self.slots.pop(("s",), None)  # re-inserted last: a status follows what led to it
        self.slots[("s",)] = status

    def once(self, op: dict[str, Any]) -> None:
        self._n += 1
        self.slots[("x", self._n)] = op

    def drain(self) -> list[dict[str, Any]]:
        ops: list[dict[str, Any]] = []
        for key, value in self.slots.items():
            kind = key[0]
            if kind == "m":
                ops.append({"op": "message", "message": value})
            elif kind == "p":
                if value["row"] is not None:
                    ops.append({"op": "part", "part": value["row"]})
                if value["delta"]:
                    ops.append({"op": "delta", "id": key[1], "message_id": value.get("message_id"),
                                "field": value["field"], "text": "".join(value["delta"])})
            elif kind == "o":
                text = "".join(value)
                ops.append({"op": "output", "id": key[1], "stream": key[2],
                            "text": text[-OUTPUT_TAIL:]})
            elif kind == "s":
                ops.append({"op": "status", **value})
            else:
                ops.append(value)
        self.slots.clear()
        return ops


# --------------------------------------------------------------------------- text output


class TextPrinter:
    """The turn as plain text on stdout: text as it streams, one line per tool step or notice."""

    def __init__(self, write: Callable[[str], Any] | None = None) -> None:
        self._write = write or (lambda s: sys.stdout.write(s))
        self.printed: dict[str, int] = {}  # text part id → characters printed
        self.tool_states: dict[str, str] = {}
        self.seen: set[str] = set()
        self.user_messages: set[str] = set()
        self.at_line_start = True
        self.last_text: str | None = None
        self.wrote_before = False  # something a new paragraph should stand apart from

    def write(self, s: str) -> None:
        if s:
            self._write(s)
            self.at_line_start = s.endswith("\n")

    def line(self, s: str, *, quiet: bool = False) -> None:
        if not self.at_line_start:
            self.write("\n")
        self.write(s + "\n")
        self.last_text = None
        self.wrote_before = not quiet

    def ops(self, ops: Iterable[dict[str, Any]]) -> None:
        for op in ops:
            kind = op["op"]
            if kind == "message":
                self._message(op["message"])
            elif kind == "part":
                self._part(op["part"])
            elif kind == "delta":
                if op["id"] in self.printed and op["field"] == "text":
                    self._text(op["id"], op["text"])
            elif kind == "output":
                text = op["text"].rstrip("\n")
                if text:
                    self.line("\n".join(f"  │ {ln}" for ln in text.split("\n")))
            elif kind == "display":
                self.line(f"  [{op['data'].get('text/plain') or 'an image'}: shown in the widget]")
            elif kind == "approval":
                r = op["request"]
                self.line(f"? {r['tool']} asks for approval (rule {r.get('rule')})")
            elif kind == "answered":
                reason = f" — {op['reason']}" if op.get("reason") else ""
                self.line(f"  approval: {op['answer']}{reason}")
            elif kind == "notice":
                self.line(f"note: {op['message']}")
            elif kind == "done":
                self.finish()

    def finish(self) -> None:
        if not self.at_line_start:
            self.write("\n")

    def _message(self, row: dict[str, Any]) -> None:
        if row.get("role") == "user":
            self.user_messages.add(row["id"])
            return
        status = row.get("status")
        key = f"status:{row['id']}"
        if status in ("error", "aborted", "interrupted") and key not in self.seen:
            self.seen.add(key)
            why = (row.get("error") or {}).get("message") or status
            word = {"error": "error", "aborted": "stopped", "interrupted": "interrupted"}[status]
            self.line(f"✗ {word}: {why}")

    def _text(self, part_id: str, text: str) -> None:
        if self.last_text != part_id:
            if not self.at_line_start:
                self.write("\n")
            if self.wrote_before:  # a blank line between paragraphs and after tool lines
                self.write("\n")
            self.last_text = part_id
        self.write(text)
        self.printed[part_id] = self.printed.get(part_id, 0) + len(text)

    def _part(self, p: dict[str, Any]) -> None:
        pid, kind = p["id"], p["type"]
        if p.get("message_id") in self.user_messages and kind != "compaction":
            return
        if kind == "text":
            done = self.printed.get(pid)
            text = p.get("text") or ""
            if done is None:
                self.printed.setdefault(pid, 0)
                done = 0
            if len(text) > done:
                self._text(pid, text[done:])
        elif kind == "reasoning":
            if pid not in self.seen:
                self.seen.add(pid)
                self.line("· thinking…", quiet=True)
        elif kind == "tool":
            state = p.get("state")
            if self.tool_states.get(pid) == state or state == "pending":
                return
            self.tool_states[pid] = state
            name = p.get("tool")
            if state == "running":
                self.line(f"▸ {name} running")
            elif state == "completed":
                d = _duration(p)
                self.line(f"✓ {name} completed" + (f" in {render.seconds(d)}" if d is not None else ""))
            elif state == "error":
                first = (p.get("error") or "").strip().split("\n")[0][:200]
                self.line(f"✗ {name} failed: {first}")
        elif kind == "retry" and pid not in self.seen:
            self.seen.add(pid)
            wait = f" after {render.seconds(p.get('wait'))}" if p.get("wait") else ""
            self.line(f"↻ retry {p.get('attempt')}{wait}: {p.get('error')}")
        elif kind == "compaction" and pid not in self.seen:
            self.seen.add(pid)
            self.line("─── context compacted ───")
        elif kind == "patch" and pid not in self.seen:
            self.seen.add(pid)
            for f in p.get("files") or ():
                self.line(f"± {f['path']} +{f.get('additions', 0)} -{f.get('deletions', 0)}")


class _Later:
    """A cancellable scheduled call (a loop handle or a timer thread, once armed)."""

    def __init__(self) -> None:
        self.cancelled = False
        self.handle: Any = None

    def cancel(self) -> None:
        self.cancelled = True
        if self.handle is not None:
            self.handle.cancel()


def _duration(p: dict[str, Any]) -> float | None:
    if p.get("time_start") is None or p.get("time_end") is None:
        return None
    return p["time_end"] - p["time_start"]


# --------------------------------------------------------------------------- the view


def _in_kernel() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


class TurnView:
    """One turn's live view: ``start()`` before the run, ``finish(messages)`` after it."""

    def __init__(self, forge: Any, session: Any, *, throttle_hz: float = 30.0,
                 text_only: bool = False, ready_timeout: float = READY_TIMEOUT) -> None:
        self.forge = forge
        self.session = session
        self.session_id: str = session.id
        self.interval = 1.0 / max(0.5, float(throttle_hz or 30.0))
        self.ready_timeout = ready_timeout
        self.text_only = text_only or os.environ.get(TEXT_MODE_ENV, "").lower() in ("off", "0", "text")
        self.state = TurnState()
        self.widget: Any = None
        self.messages_sent = 0  # custom messages to the front end
        self.bytes_sent = 0
        self._pending = Pending()
        self._printer: TextPrinter | None = None
        self._lock = threading.RLock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None
        self._context: contextvars.Context | None = None
        self._handle: Any = None
        self._seq = 0
        self._scheduled = False
        self._last_flush = 0.0
        self._ready = False
        self._ready_timer: Any = None
        self._unsubscribe: Callable[[], None] | None = None
        self._remove_handler: Callable[[], None] | None = None
        self._started = self._finished = False

    # -- public ---------------------------------------------------------------------------

    @property
    def fallback(self) -> bool:
        """True when the turn streams as plain text (no widget frontend answered)."""
        return self._printer is not None

    @property
    def ready(self) -> bool:
        return self._ready

    def start(self) -> TurnView:
        """Show the live widget (or start text mode) and follow the session on the bus."""
        if self._started:
            return self
        self._started = True
        try:
            self._loop = asyncio.get_running_loop()
        except RuntimeError:
            self._loop = None
        self._loop_thread = threading.get_ident()
        self._context = contextvars.copy_context()
        widget_mode = not self.text_only and _in_kernel()
        if widget_mode:
            try:
                self._show_widget()
            except Exception:  # no anywidget, no display: the run must still be visible
                log.exception("forge: the live widget could not be shown; streaming text instead")
                widget_mode = False
        if not widget_mode:
            self._printer = TextPrinter()
        self._unsubscribe = self.forge.bus.subscribe(self._on_event, session_id=self.session_id,
                                                     types=_EVENTS)
        if widget_mode:
            # Someone can answer approvals while the widget is live.
            self._remove_handler = self.forge.on_approval(self._approval_handler)
            self._ready_timer = self._call_later(self.ready_timeout, self._check_ready, time.monotonic())
        return self

    def finish(self, messages: Iterable[Message] | Message | None = None, *,
               with_answer: bool = False) -> None:
        """Last flush, stop following the bus, and leave a static record in place of the widget.

        ``messages``: the turn's messages as stored (extra ones of the session are ignored);
        None rebuilds them from what streamed. ``with_answer``: the record ends with the final
        answer too, for runs whose cell shows no value (``%%forge --async``).
        """
        if self._finished or not self._started:
            return
        self._finished = True
        if self._ready_timer is not None:
            self._ready_timer.cancel()
        if self._unsubscribe is not None:
            self._unsubscribe()
        if self._remove_handler is not None:
            self._remove_handler()
            self._remove_handler = None
        with self._lock:
            self.state.done = True
            self._pending.once({"op": "done"})
            self._flush()
        if self._handle is not None:
            turn = self._turn_messages(messages)
            html = render.turn_work_html(turn, self.state.displays, with_answer=with_answer)
            text = render.turn_work_text(turn, with_answer=with_answer)
            try:
                self._handle.update({"text/html": html, "text/plain": text}, raw=True)
            except Exception:
                log.exception("forge: could not replace the live widget with its record")
            self.widget.close()

    # -- showing --------------------------------------------------------------------------

    def _show_widget(self) -> None:
        from IPython.display import display

        self.widget = TurnWidget(session_id=self.session_id)
        self.widget.on_msg(self._on_view_message)
        self._handle = display(self.widget, display_id=True)

    def _call_later(self, delay: float, fn: Callable[..., Any], *args: Any) -> _Later:
        """Run ``fn`` after ``delay`` seconds on the kernel's loop, from any thread, in the
        cell's context (so what it prints lands in the cell); a timer thread without a loop."""
        later = _Later()
        ctx = (self._context or contextvars.copy_context()).copy()
        loop = self._loop
        if loop is not None and not loop.is_closed():
            def arm() -> None:
                if not later.cancelled:
                    later.handle = loop.call_later(delay, fn, *args, context=ctx.copy())

            try:
                loop.call_soon_threadsafe(arm, context=ctx)
                return later
            except RuntimeError:  # the loop closed meanwhile
                pass
        timer = threading.Timer(delay, lambda: ctx.run(fn, *args))
        timer.daemon = True
        later.handle = timer
        timer.start()
        return later

    # -- bus → state + pending ------------------------------------------------------------

    def _on_event(self, ev: Any) -> None:
        with self._lock:
            if self._finished:
                return
            self._ingest(ev)
            if not self._pending:
                return
            wait = self._last_flush + self.interval - time.monotonic()
            if self._loop is None and self.widget is None:
                wait = 0.0  # a terminal: print as it comes, there is no iopub to protect
            if wait <= 0 and self._may_flush_here():
                # Due now: flush inline. A fast stream can keep the loop from running timers
                # (its chunks arrive already buffered), so the timer is only the trailing edge.
                self._flush()
                return
            if self._scheduled:
                return
            self._scheduled = True
        self._call_later(max(0.0, wait), self._on_timer)

    def _may_flush_here(self) -> bool:
        if self._loop is None:
            return self.widget is None  # terminal text mode
        return threading.get_ident() == self._loop_thread

    def _on_timer(self) -> None:
        with self._lock:
            self._scheduled = False
            if not self._pending or self._finished:
                return
            wait = self._last_flush + self.interval - time.monotonic()
            if wait > 0.001:  # an inline flush came in between: keep the rate
                self._scheduled = True
            else:
                self._flush()
                return
        self._call_later(wait, self._on_timer)

    def _ingest(self, ev: Any) -> None:
        st, pend = self.state, self._pending
        t = type(ev)
        if t is PartDelta:
            if ev.part_id in st.parts:
                st.chunks.setdefault(ev.part_id, []).append(ev.delta)
                pend.delta(ev)
        elif t is PartUpdated:
            part = ev.part
            if part.message_id in st.user_messages and not isinstance(part, CompactionPart):
                return
            row = part.to_json()
            st.parts[part.id] = row
            st.chunks.pop(part.id, None)
            pend.part(row)
        elif t is MessageUpdated:
            m = ev.message
            row = m.to_json()
            st.messages[m.id] = row
            pend.message(row)
            if m.role == "user":
                st.user_messages.add(m.id)
            for part in m.parts:  # parts written with a new message (a compaction request)
                if part.id not in st.parts and (m.role == "assistant" or isinstance(part, CompactionPart)):
                    prow = part.to_json()
                    st.parts[part.id] = prow
                    pend.part(prow)
        elif t is SessionStatus:
            if ev.status == "notice":
                notice = {"message": str(ev.detail.get("message", "")), "level": "info"}
                st.notices.append(notice)
                pend.once({"op": "notice", **notice})
            else:
                st.status = {"status": ev.status, "detail": dict(ev.detail)}
                pend.status(st.status)
        elif t is ToolOutput:
            pieces = st.outputs.setdefault(ev.part_id, [])
            pieces.append((ev.stream, ev.text))
            st.output_chars[ev.part_id] = st.output_chars.get(ev.part_id, 0) + len(ev.text)
            while st.output_chars[ev.part_id] > OUTPUT_TAIL and len(pieces) > 1:
                st.output_chars[ev.part_id] -= len(pieces.pop(0)[1])
            pend.output(ev.part_id, ev.stream, ev.text)
        elif t is DisplayData:
            st.displays.setdefault(ev.part_id, []).append(ev.data)
            pend.once({"op": "display", "id": ev.part_id, "data": ev.data})
        elif t is ApprovalRequested:
            request = {"id": ev.request_id, "part_id": ev.part_id, "tool": ev.tool,
                       "input": ev.input, "rule": ev.rule}
            st.approvals[ev.request_id] = {"request": request, "answer": None, "reason": None}
            pend.once({"op": "approval", "request": request})
        elif t is ApprovalAnswered:
            a = st.approvals.get(ev.request_id)
            if a is not None:
                a["answer"], a["reason"] = ev.answer, ev.reason
            pend.once({"op": "answered", "id": ev.request_id, "answer": ev.answer,
                       "reason": ev.reason})

    # -- pending → the front end ----------------------------------------------------------

    def _flush(self) -> None:
        with self._lock:
            if not self._pending:
                return
            self._last_flush = time.monotonic()
            ops = self._pending.drain()
            if self._printer is not None:
                self._print(ops)
            elif self.widget is not None:
                self._seq += 1
                self._send({"kind": "batch", "seq": self._seq, "ops": ops})

    def _send(self, msg: dict[str, Any]) -> None:
        try:
            self.widget.send(msg)
        except Exception:  # a closed comm (kernel shutting down): nothing left to show
            log.debug("forge: widget message not sent", exc_info=True)
            return
        self.messages_sent += 1
        self.bytes_sent += len(json.dumps(msg, separators=(",", ":"), default=str))

    def _print(self, ops: list[dict[str, Any]]) -> None:
        try:
            self._printer.ops(ops)  # type: ignore[union-attr]
        except Exception:
            log.exception("forge: text output failed")

    def _send_snapshot(self) -> None:
        with self._lock:
            self._flush()  # what is pending goes first, so the snapshot repeats nothing later
            self._send({"kind": "snapshot", "seq": self._seq, "ops": self.state.snapshot_ops()})

    # -- the view's messages --------------------------------------------------------------

    def _on_view_message(self, _widget: Any, content: Any, _buffers: Any = None) -> None:
        if not isinstance(content, dict):
            return
        kind = content.get("type")
        if kind in ("ready", "hello"):
            with self._lock:
                self._ready = True
                if self._printer is not None and not self._finished:
                    self._printer = None  # a view appeared late: it takes over from the text
                    if self._remove_handler is None:
                        self._remove_handler = self.forge.on_approval(self._approval_handler)
                self._send_snapshot()
        elif kind == "approve":
            answer = content.get("answer")
            reason = content.get("reason") or None
            try:
                self.forge.approve(str(content.get("request_id")), str(answer), reason, by="widget")
            except Exception as exc:  # already answered, the run ended, a bad answer
                self._notice(f"That approval could not be sent: {exc}")
        elif kind == "stop":
            if not self.session.abort():
                self._notice("Nothing to stop: the run has already ended.")

    def _notice(self, message: str) -> None:
        with self._lock:
            notice = {"message": message, "level": "warning"}
            self.state.notices.append(notice)
            self._pending.once({"op": "notice", **notice})
            self._flush()

    def _approval_handler(self, request: Any) -> None:
        return None  # the person answers in the widget, later

    # -- no view: text --------------------------------------------------------------------

    def _check_ready(self, armed_at: float | None) -> None:
        if self._ready or self._finished:
            return
        if armed_at is not None and time.monotonic() - armed_at - self.ready_timeout > 0.25:
            # The loop was busy: the view's message may be waiting behind it. One more look.
            self._ready_timer = self._call_later(0.5, self._check_ready, None)
            return
        self._to_text()

    def _to_text(self) -> None:
        with self._lock:
            if self._ready or self._finished or self._printer is not None:
                return
            self._printer = TextPrinter()
            self._pending.drain()  # the snapshot below covers it
            self._print(self.state.snapshot_ops())
            if self._remove_handler is not None:
                self._remove_handler()
                self._remove_handler = None
        # Nobody can click: an ask that is already waiting is denied, as in a script.
        for request in self.forge.approvals.pending(self.session_id):
            try:
                self.forge.approve(request.id, "deny", "no one can answer approvals here (the "
                                   "notebook frontend shows no widgets)", by="forge")
            except Exception:
                log.debug("forge: approval already answered", exc_info=True)

    # -- the record -----------------------------------------------------------------------

    def _turn_messages(self, messages: Iterable[Message] | Message | None) -> list[Message]:
        if messages is None:
            return self.state.messages_with_parts()
        if isinstance(messages, Message):
            messages = [messages]
        messages = list(messages)
        seen = set(self.state.messages)
        if seen and any(m.id in seen for m in messages):
            return [m for m in messages if m.id in seen]
        # Nothing seen live (an error before the run wrote anything): the latest turn.
        users = [i for i, m in enumerate(messages) if m.role == "user"]
        return messages[users[-1]:] if users else messages
