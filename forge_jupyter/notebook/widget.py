"""The live widget of a turn: bus events, coalesced, into an anywidget front end (DESIGN §7).

Front end: ``labextension/src/render/`` (marked + DOMPurify), shared with the side panel;
``npm run build`` there (run by every ``pip install`` of a source tree) bundles it into the
labextension and into ``static/widget.js`` + ``widget.css``. The widget's ``_esm`` is a small
bootstrap that renders with either (``widget_code``): saved notebooks stay small.

Protocol: custom widget messages (declared in ``ops``), never a growing trait
(docs/architecture.md, *The widget's protocol*): batches at most ``throttle_hz`` a second,
snapshots answering a view's ``ready`` or ``hello``; the view sends ``ready``, ``hello``,
``stop``, ``approve`` and ``answer``.

A view shows at once (``show``), before the Forge and the session exist; ``follow`` then binds
it to the session's events. When the turn ends, the widget's output is replaced by the static
record and the note after it (``saved_note``) by nothing; the widget itself stays open for a
while, so a page reloaded mid-run, which never receives that replacement, still shows the
finished turn. When no view says ``ready`` within ~1.5 s (nbclient, nbconvert, a frontend
without widgets), or outside a kernel, or with ``FORGE_WIDGET=off``, the turn streams as plain
text instead (``text_printer``).

This module imports nothing heavy (anywidget, traitlets): the widget can show while the model
client is still loading.
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

import anywidget
import traitlets

from . import answering, panel, saved_note, text_printer, widget_code
from .loop_calls import Later, call_later
from .turn_state import Pending, TurnState, event_types

log = logging.getLogger(__name__)

READY_TIMEOUT = 1.5  # seconds for a view to say it rendered before the turn goes to text
CODE_TIMEOUT = 10.0  # …once it asked for the renderer (no labextension: ~90 KB to load)
TEXT_MODE_ENV = "FORGE_WIDGET"
KEEP_OPEN = 20  # finished turns whose widgets stay open for reloaded pages


class TurnWidget(anywidget.AnyWidget):
    """One turn's live view; its state travels as custom messages (see the module docstring)."""

    _esm = widget_code.boot_esm()
    session_id = traitlets.Unicode("").tag(sync=True)
    # What the header says before the first snapshot arrives (the model client is loading).
    loading = traitlets.Unicode("").tag(sync=True)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = super()._repr_mimebundle_(**kwargs)
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        if isinstance(data, dict):  # what a frontend without widgets shows instead
            data["text/plain"] = "forge: the live view of a %%forge turn (needs its kernel)"
        return bundle


_kept: collections.deque[TurnWidget] = collections.deque()


def _keep_open(widget: TurnWidget) -> None:
    _kept.append(widget)
    while len(_kept) > KEEP_OPEN:
        _kept.popleft().close()


class TurnView:
    """One turn's live view: ``show()`` at once, ``follow(forge, session)`` when they exist,
    ``finish(messages)`` after the run (``start()`` is show + follow)."""

    def __init__(self, forge: Any = None, session: Any = None, *, throttle_hz: float = 30.0,
                 text_only: bool = False, ready_timeout: float = READY_TIMEOUT,
                 origin: str = "cell", prompt: str = "") -> None:
        self.origin, self.prompt, self.turn_id = origin, prompt, panel.new_turn_id()  # panel.py
        self.forge = forge
        self.session = session
        self.session_id: str = session.id if session is not None else ""
        self.interval = 1.0 / max(0.5, float(throttle_hz or 30.0))
        self.ready_timeout = ready_timeout
        self.text_only = text_only or os.environ.get(TEXT_MODE_ENV, "").lower() in ("off", "0", "text")
        self.state = TurnState()
        self.widget: Any = None
        # Custom messages to the front end. Not their bytes: measuring them would serialize each
        # message a second time (the comm does it once); benchmarks/bench_widget.py counts them
        # where they arrive.
        self.messages_sent = 0
        self.stop_requested = False  # Stop clicked before the run began
        self._pending = Pending()
        self._printer: Any = None  # a TextPrinter once the turn streams as text
        self._lock = threading.RLock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None
        self._context: contextvars.Context | None = None
        self._handle: Any = None
        self._note: Any = None
        self._seq = 0
        self._scheduled = False
        self._last_flush = 0.0
        self._ready = False
        self._ready_timer: Any = None
        self._unsubscribe: Callable[[], None] | None = None
        self._remove_handler: Callable[[], None] | None = None
        self._shown = self._following = self._finished = self.listed = False  # listed: panel.py

    # -- public ---------------------------------------------------------------------------

    @property
    def fallback(self) -> bool:
        """True when the turn streams as plain text (no widget frontend answered)."""
        return self._printer is not None

    @property
    def ready(self) -> bool:
        return self._ready

    def show(self, loading: str | None = None) -> TurnView:
        """Show the live widget (or start text mode) now; ``loading`` is what it says until
        ``follow`` (the model client is still loading), from its very first paint."""
        if self._shown:
            return self
        self._shown = True
        try:
            self._loop = asyncio.get_running_loop()
        except RuntimeError:
            self._loop = None
        self._loop_thread = threading.get_ident()
        self._context = contextvars.copy_context()
        if loading:
            self.state.status = {"status": "loading", "detail": {"message": loading}}
        panel_only = self.origin == "panel" and text_printer.in_kernel() and panel.HUB.attached
        widget_mode = not self.text_only and self.origin != "panel" and text_printer.in_kernel()
        if widget_mode:
            try:
                self._show_widget()
            except Exception:  # no anywidget, no display: the run must still be visible
                log.exception("forge: the live widget could not be shown; streaming text instead")
                widget_mode = False
        if widget_mode:
            self._ready_timer = self._call_later(self.ready_timeout, self._check_ready, time.monotonic())
        elif not panel_only:
            self._printer = text_printer.printer_here()
            self._print(self.state.snapshot_ops())
        return self

    def follow(self, forge: Any, session: Any) -> TurnView:
        """Follow the session's events on the bus (and answer its approvals in the widget)."""
        self.show()
        if self._following or self._finished:
            return self
        self._following = True
        self.forge, self.session, self.session_id = forge, session, session.id
        with self._lock:
            if self.state.status.get("status") == "loading":
                self.state.status = {"status": "busy", "detail": {}}
                self._pending.status(self.state.status)
        if self.widget is not None:
            self.widget.session_id = session.id
        self._unsubscribe = forge.bus.subscribe(self._on_event, session_id=session.id,
                                                types=event_types())
        if self.widget is not None and self._printer is None:
            # Someone can answer approvals and questions while the widget is live.
            self._remove_handler = answering.listen(forge)
        panel.HUB.followed(self)
        with self._lock:
            self._flush()  # "loading" gives way to "working"
        return self

    def start(self) -> TurnView:
        """``show()`` and ``follow()`` the session given to the constructor."""
        return self.follow(self.forge, self.session)

    def finish(self, messages: Iterable[Any] | Any = None, *, with_answer: bool = False) -> None:
        """Last flush, stop following the bus, and leave a static record in place of the widget.

        ``messages``: the turn's messages as stored (extra ones of the session are ignored);
        None rebuilds them from what streamed; ``[]`` when the run never began (the widget is
        removed). ``with_answer``: the record ends with the final answer too, for runs whose
        cell shows no value (``%%forge --async``).
        """
        if self._finished or not self._shown:
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
        panel.HUB.turn_ended(self)
        if self._handle is None:
            return
        turn = self.state.turn_messages(messages)
        bundle: dict[str, Any] = saved_note.EMPTY
        if turn:
            from .. import render

            bundle = {"text/html": render.turn_work_html(turn, self.state.displays, with_answer=with_answer),
                      "text/plain": render.turn_work_text(turn, with_answer=with_answer)}
        try:
            # No view showed the turn (streamed as text, or none answered yet): its record
            # replaces all the cell showed. --async: the cell has moved on, update in place.
            if (self._printer is not None or not self._ready) and turn and not with_answer:
                self._handle, self._note = text_printer.replace_streamed(bundle), None
            else:
                self._handle.update(bundle, raw=True)
            if self._note is not None:
                self._note.update(saved_note.EMPTY, raw=True)
        except Exception:
            log.exception("forge: could not replace the live widget with its record")
        if turn:
            _keep_open(self.widget)  # a page reloaded mid-run still shows the finished turn
        else:
            self.widget.close()

    # -- showing --------------------------------------------------------------------------

    def _show_widget(self) -> None:
        from IPython.display import display

        loading = self.state.status.get("detail", {}).get("message", "")
        self.widget = TurnWidget(session_id=self.session_id,
                                 loading=loading if self.state.status["status"] == "loading" else "")
        self.widget.on_msg(self._on_view_message)
        self._handle = display(self.widget, display_id=True)
        self._note = display(saved_note.note_bundle(), raw=True, display_id=True)

    def _call_later(self, delay: float, fn: Callable[..., Any], *args: Any) -> Later:
        return call_later(self._loop, self._context, delay, fn, *args)

    # -- bus → state + pending ------------------------------------------------------------

    def _on_event(self, ev: Any) -> None:
        with self._lock:
            if self._finished:
                return
            self.state.ingest(ev, self._pending)
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

    # -- pending → the front end ----------------------------------------------------------

    def _flush(self) -> None:
        with self._lock:
            if not self._pending:
                return
            self._last_flush = time.monotonic()
            ops = self._pending.drain()
            self._seq += 1
            if self._printer is not None:
                self._print(ops)
            elif self.widget is not None:
                self._send({"kind": "batch", "seq": self._seq, "ops": ops})
            panel.HUB.batch(self, self._seq, ops)  # the same ops to the side panels

    def _send(self, msg: dict[str, Any]) -> None:
        try:
            self.widget.send(msg)
        except Exception:  # a closed comm (kernel shutting down): nothing left to show
            log.debug("forge: widget message not sent", exc_info=True)
            return
        self.messages_sent += 1

    def _print(self, ops: list[dict[str, Any]]) -> None:
        try:
            self._printer.ops(ops)
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
                    if self._remove_handler is None and self._following:
                        self._remove_handler = answering.listen(self.forge)
                self._send_snapshot()
        elif kind in ("approve", "answer"):  # an approval's button, a question's answer
            failed = answering.answer_from_view(None if self._finished else self.forge,
                                                content, by="widget")
            if failed:
                self._notice(failed)
        elif kind == "code":  # a bootstrap without the labextension asks for the renderer
            self._send(widget_code.code_message())
            with self._lock:  # a view exists and is loading its renderer: give it the time
                if not (self._ready or self._finished or self._printer is not None):
                    if self._ready_timer is not None:
                        self._ready_timer.cancel()
                    self._ready_timer = self._call_later(CODE_TIMEOUT, self._check_ready, None)
        elif kind == "stop":
            if self._finished:
                self._notice("Nothing to stop: the run has already ended.")
            elif not self._following:
                self.stop_requested = True  # the run will not begin
            elif not self.session.abort():
                self._notice("Nothing to stop: the run has already ended.")

    def _notice(self, message: str) -> None:
        with self._lock:
            notice = {"message": message, "level": "warning"}
            self.state.notices.append(notice)
            self._pending.once({"op": "notice", **notice})
            self._flush()

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
            self._printer = text_printer.printer_here()
            self._pending.drain()  # the snapshot below covers it
            self._print(self.state.snapshot_ops())
            if self._remove_handler is not None:
                self._remove_handler()
                self._remove_handler = None
        # Nobody can click (unless a side panel is attached): an ask already waiting is denied.
        panel.HUB.deny_unanswered(self)

    # -- the record -----------------------------------------------------------------------
