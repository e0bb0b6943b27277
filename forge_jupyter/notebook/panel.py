"""The kernel side of the JupyterLab side panel: the comm target ``forge.panel`` (docs/api.md).

Every ``TurnView`` of this kernel — a ``%%forge`` cell's, or a prompt sent from the panel
(``%%forge --panel``) — tells the hub each batch it flushes (the very ops its widget gets,
coalesced once; the first once its prompt was taken lists the turn, as a snapshot of its
``TurnState``) and when it ends; the hub sends them to every panel comm that has said
``hello``, and acts on the panel's ``approve`` and ``stop`` like the cell widget does. A cell
edit goes to one page only (page_requests.py says why).

Live events travel over a kernel comm rather than from the server because the kernel has
every event in memory and holds the approval futures, and the comm rides the kernel's
websocket that Jupyter already authenticates (docs/api.md says more).

A comm counts as a panel once it says ``hello``: a frontend without the extension closes the
comm the kernel opens at ``%load_ext``, and one that ignores comms (nbclient) never says hello,
so neither changes how a turn behaves. While a panel is attached, approvals of any turn can be
answered there: the hub keeps an approval handler on the notebook's Forge, and a cell whose
widget fell back to text no longer denies its asks.
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any

from . import answering
from . import panel_protocol as proto
from .page_requests import PageRequests, reorder
from .pasted import PastedImages

log = logging.getLogger(__name__)

TARGET = "forge.panel"
NO_WIDGETS = "no one can answer approvals here (the notebook frontend shows no widgets)"
CLOSED = "the notebook's page closed before it applied the change"
PANEL_GONE = "no one can answer approvals here (the side panel was closed and no widget shows this run)"


def new_turn_id() -> str:
    return "turn_" + secrets.token_hex(8)


class PanelHub:
    """The open panel comms of this kernel and the turns they follow."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._comms: dict[str, Any] = {}  # comm id → comm, open
        self._attached: dict[str, Any] = {}  # the comms that said hello
        self._live: dict[str, Any] = {}  # turn id → TurnView, shown and not finished
        self._bound: dict[int, tuple[Any, Callable[[], None]]] = {}  # id(Forge) → its handler's remover
        self._last_info: dict[str, Any] | None = None
        self.controller: Any = None
        self.shell: Any = None
        self._cell_requests: PageRequests[list[Any]] = PageRequests("cells")  # read-cells
        self.pasted = PastedImages()  # the box's images, until the prompt naming them runs
        self._edit_requests: PageRequests[Any] = PageRequests("edit")  # edit-cell, revert-cells

    @property
    def attached(self) -> bool:
        """A panel is listening: it can show this kernel's turns and answer their approvals."""
        return bool(self._attached)

    # -- %load_ext / %unload_ext ----------------------------------------------------------

    def install(self, shell: Any, controller: Any) -> None:
        """Register the target and open a comm to the frontend's (in a kernel only)."""
        if getattr(shell, "kernel", None) is None:
            return
        import comm

        self.shell, self.controller = shell, controller
        comm.get_comm_manager().register_target(TARGET, self._on_open)
        shell.events.register("post_execute", self.refresh_info)
        try:  # a frontend without the extension closes it at once; nothing else happens
            self._track(comm.create_comm(target_name=TARGET, data={"protocol": proto.PROTOCOL}))
        except Exception:
            log.debug("forge: could not open the panel comm", exc_info=True)

    def uninstall(self) -> None:
        if self.shell is None:
            return
        import comm

        comm.get_comm_manager().targets.pop(TARGET, None)
        try:
            self.shell.events.unregister("post_execute", self.refresh_info)
        except ValueError:
            pass
        with self._lock:
            comms = list(self._comms.values())
            self._comms.clear()
            self._attached.clear()
        self._unbind()
        for c in comms:
            try:
                c.close()
            except Exception:
                log.debug("forge: panel comm not closed", exc_info=True)
        self.shell = self.controller = None
        self._live.clear()
        self._last_info = None

    # -- comms ----------------------------------------------------------------------------

    def _on_open(self, comm: Any, msg: dict[str, Any]) -> None:
        """A panel opened a comm to this kernel (forge was loaded before it attached)."""
        self._track(comm)
        data = (msg.get("content") or {}).get("data")
        if isinstance(data, dict) and data.get("type") == "hello":
            self._handle(comm, data)

    def _track(self, comm: Any) -> None:
        with self._lock:
            self._comms[comm.comm_id] = comm
        comm.on_msg(lambda msg: self._on_msg(comm, msg))
        comm.on_close(lambda _msg: self._closed(comm))

    def _closed(self, comm: Any) -> None:
        with self._lock:
            self._comms.pop(comm.comm_id, None)
            last = self._attached.pop(comm.comm_id, None) is not None and not self._attached
        # An edit the closed page was applying: it cannot answer now (cells/edit.py says so).
        self._edit_requests.answer_owned(comm.comm_id, CLOSED)
        if last:
            self._unbind()
            # Asks waiting for the panel in runs no widget shows: nobody can answer them now.
            for view in list(self._live.values()):
                if view.widget is None or view.fallback:
                    self.deny_unanswered(view, PANEL_GONE)

    def _on_msg(self, comm: Any, msg: dict[str, Any]) -> None:
        with self._lock:  # the page last heard from is the one a person is using
            reorder(self._attached, comm.comm_id, last=True)
        try:
            self._handle(comm, (msg.get("content") or {}).get("data"))
        except Exception as exc:  # never into the kernel's log as a failed comm message
            log.warning("forge: a side panel message failed", exc_info=True)
            self._send(comm, proto.notice(f"The kernel could not handle that panel message: {exc}"))

    def _handle(self, comm: Any, data: Any) -> None:
        try:
            command = proto.parse(data)
        except proto.PanelError as exc:
            self._send(comm, proto.notice(f"The kernel ignored a panel message: {exc}"))
            return
        if isinstance(command, proto.Hello):
            self._hello(comm)
        elif isinstance(command, proto.Approve):
            self._approve(comm, command)
        elif isinstance(command, proto.AnswerQuestion):
            self._answer(comm, command)
        elif isinstance(command, proto.CellsReply):
            self._cells(command)
        elif isinstance(command, proto.PastedImage):
            self.pasted.keep(command.image_id, command.data, command.mime)
        elif isinstance(command, proto.Complete):
            self._send(comm, proto.completions(command.request_id, command.query, self.controller))
        elif isinstance(command, proto.CellEditedReply | proto.CellsReverted):
            self._edited(command)
        elif isinstance(command, proto.CellReviewed):
            self._reviewed(comm, command)
        else:
            self._stop(comm, command)

    def _send(self, comm: Any, msg: dict[str, Any]) -> None:
        try:
            comm.send(msg)
        except Exception:  # a closed comm (the kernel shutting down)
            log.debug("forge: panel message not sent", exc_info=True)

    def _publish(self, msg: dict[str, Any]) -> None:
        with self._lock:
            comms = list(self._attached.values())
        for c in comms:
            self._send(c, msg)

    # -- the panel's messages -------------------------------------------------------------

    def _hello(self, comm: Any) -> None:
        """Attach the comm: info, then a snapshot of each running turn."""
        with self._lock:
            self._attached[comm.comm_id] = comm
            reorder(self._attached, comm.comm_id, last=True)  # the page edits go to
        self._send(comm, self._info())
        self._bind_all()
        for view in list(self._live.values()):
            # Under the view's lock, as its widget's snapshots: no batch between the flush and
            # the snapshot, so the next batch this comm gets is seq + 1.
            with view._lock:
                view._flush()  # what is pending goes first, so the snapshot repeats nothing later
                self._send(comm, self._turn_message(view))

    def _approve(self, comm: Any, command: proto.Approve) -> None:
        forge = self._forge_asking(command.request_id)
        if forge is None:
            self._send(comm, proto.notice("That approval could not be sent: it was already "
                                          "answered, or its run has ended."))
            return
        try:
            forge.approve(command.request_id, command.answer, command.reason, by="panel")
        except Exception as exc:  # answered meanwhile, the run ended
            self._send(comm, proto.notice(f"That approval could not be sent: {exc}"))

    def _answer(self, comm: Any, command: proto.AnswerQuestion) -> None:
        forge = self._forge_asking(command.request_id)
        if forge is None:
            failed = ("That answer could not be sent: the question was already answered, or "
                      "its run has ended.")
        else:
            failed = answering.answer_from_view(forge, {"type": "answer", "text": command.text,
                                                        "request_id": command.request_id},
                                                by="panel")
        if failed:
            self._send(comm, proto.notice(failed))

    def _forge_asking(self, request_id: str) -> Any:
        forges = [v.forge for v in list(self._live.values())]
        forges.append(proto.built_forge(self.controller))
        for forge in dict.fromkeys(f for f in forges if f is not None):
            asked = [*forge.approvals.pending(), *getattr(forge, "questions", forge.approvals).pending()]
            if any(r.id == request_id for r in asked):
                return forge
        return None

    def _stop(self, comm: Any, command: proto.Stop) -> None:
        views = [v for v in list(self._live.values())
                 if (command.turn_id and v.turn_id == command.turn_id)
                 or (command.session_id and v.session_id == command.session_id)]
        if not views:
            self._send(comm, proto.notice("Nothing to stop: that run has already ended."))
        for view in views:
            if view.state.done:
                self._send(comm, proto.notice("Nothing to stop: that run has already ended."))
            elif view.session is None:
                view.stop_requested = True  # still loading: the run will not begin
            elif not view.session.abort():
                self._send(comm, proto.notice("Nothing to stop: that run has already ended."))

    # -- the live document (notebook_read, notebook/cells/) -------------------------------

    def request_cells(self, max_chars: int, image_ids: Sequence[str] = (),
                      image_chars: int = 0) -> Future[list[Any]] | None:
        """Ask the attached pages for the notebook's cells (the first answer wins: a page
        left open elsewhere may be gone), or for the cells ``image_ids`` with their images
        whole up to ``image_chars``; None when no page can answer."""
        if not self._attached:
            return None
        request_id, future = self._cell_requests.open()
        ask: dict[str, Any] = {"kind": "read-cells", "request_id": request_id,
                               "max_chars": max_chars}
        if image_ids:
            ask.update(image_ids=list(image_ids), image_chars=image_chars)
        self._publish(ask)
        return future

    def forget_cells(self, future: Future[list[Any]]) -> None:
        self._cell_requests.forget(future)

    def _cells(self, command: proto.CellsReply) -> None:
        self._cell_requests.answer(command.request_id, command.cells)

    # -- the cell tools (notebook/cells/edit.py) ------------------------------------------

    def request_edit(self, edit: dict[str, Any], kind: str = "edit-cell") -> Future[Any] | None:
        """Send ``edit`` (an ``edit-cell``, or ``kind`` such as ``revert-cells``, without its
        request id) to the page that attached last — one page, so it is applied once; the
        future holds its answer, or why none can come; None when no page is attached."""
        with self._lock:
            page = next(reversed(self._attached.values()), None)
        if page is None:
            return None
        request_id, future = self._edit_requests.open(owner=page.comm_id)
        self._send(page, {"kind": kind, "request_id": request_id, **edit})
        return future

    def forget_edit(self, future: Future[Any]) -> None:
        owner = self._edit_requests.forget(future)
        with self._lock:
            reorder(self._attached, owner, last=False)

    def send_outputs(self, cell_id: str, outputs: list[dict[str, Any]], running: bool) -> None:
        """A cell notebook_run runs: its outputs so far, to the pages (cells/run.py)."""
        self._publish({"kind": "cell-outputs", "cell_id": cell_id, "outputs": outputs,
                       "running": running})

    def _edited(self, command: proto.CellEditedReply | proto.CellsReverted) -> None:
        self._edit_requests.answer(command.request_id, command)

    def _reviewed(self, comm: Any, command: proto.CellReviewed) -> None:
        """The person's decision on a staged change, recorded in its session (review.py). Forge
        is built for it if no cell has been: the page sends a decision it kept while the kernel
        restarted right after ``%load_ext``."""
        forge = proto.built_forge(self.controller)
        if forge is None and self.controller is not None and not self.controller.closed:
            forge = self.controller.forge
        if forge is None:
            self._send(comm, proto.notice("That review was not recorded: forge is not loaded "
                                          "in this kernel any more."))
            return
        from .cells.review import record_review
        why = record_review(forge, command.session_id, command.change_id, command.cell_id,
                            command.edit, command.decision, by="user")
        if why:
            self._send(comm, proto.notice(f"That review was not recorded: {why}."))

    # -- approvals: the panel as someone who can answer -----------------------------------

    def _bind(self, forge: Any) -> None:
        """While a panel is attached, ``forge``'s asks wait for an answer (from the panel)."""
        if forge is None or not self._attached:
            return
        with self._lock:
            if id(forge) not in self._bound:
                self._bound[id(forge)] = (forge, answering.listen(forge))

    def _bind_all(self) -> None:
        self._bind(proto.built_forge(self.controller))
        for view in list(self._live.values()):
            self._bind(view.forge)

    def _unbind(self) -> None:
        with self._lock:
            bound = list(self._bound.values())
            self._bound.clear()
        for _forge, remove in bound:
            remove()

    def deny_unanswered(self, view: Any, reason: str = NO_WIDGETS) -> None:
        """A run no view can answer in: its asks already waiting are denied, as in a script —
        unless a panel is attached, which can answer them."""
        if view.forge is None or self._attached:
            return
        answering.close_waiting(view.forge, view.session_id, reason)  # and its questions

    # -- the turns (called by TurnView) ---------------------------------------------------

    def turn_started(self, view: Any) -> None:
        if self.shell is None:
            return  # not in a kernel with forge loaded: no panel can be listening
        self._live[view.turn_id] = view
        if self._attached:
            with view._lock:
                self._publish(self._turn_message(view))

    def followed(self, view: Any) -> None:
        """The view is bound to its Forge and session: the panel can answer its asks."""
        if self.shell is not None:
            self._bind(view.forge)
            self.refresh_info()

    def batch(self, view: Any, seq: int, ops: list[dict[str, Any]]) -> None:
        """The ops ``view`` just flushed (under its lock): to every attached panel. A view is
        listed as a turn once its prompt was taken (its user message came), from a snapshot
        holding these ops: a cell refused for its options or its session never is."""
        if not view.listed:
            if view.state.messages or view.state.user_messages:
                view.listed = True
                self.turn_started(view)
            return
        if self._attached and view.turn_id in self._live:
            self._publish({"kind": "batch", "turn_id": view.turn_id,
                           "session_id": view.session_id, "seq": seq, "ops": ops})

    def turn_ended(self, view: Any) -> None:
        if self._live.pop(view.turn_id, None) is not None and self._attached:
            self._publish({"kind": "turn-end", "turn_id": view.turn_id,
                           "session_id": view.session_id})
            self.refresh_info()

    def _turn_message(self, view: Any) -> dict[str, Any]:
        return {"kind": "turn", "turn_id": view.turn_id, "session_id": view.session_id,
                "origin": view.origin, "prompt": view.prompt[:proto.PROMPT_MAX],
                "seq": view._seq, "ops": view.state.snapshot_ops()}

    # -- info -----------------------------------------------------------------------------

    def _info(self) -> dict[str, Any]:
        msg = proto.info(self.controller, list(self._live))
        self._last_info = {k: v for k, v in msg.items() if k != "live"}
        return msg

    def refresh_info(self, *_args: Any) -> None:
        """Send a fresh info when what it says changed (a new current session, %config …)."""
        if not self._attached or self.controller is None:
            return
        try:
            msg = proto.info(self.controller, list(self._live))
            if {k: v for k, v in msg.items() if k != "live"} != self._last_info:
                self._last_info = {k: v for k, v in msg.items() if k != "live"}
                self._publish(msg)
        except Exception:  # an IPython event callback must not fail the cell
            log.debug("forge: panel info not refreshed", exc_info=True)


HUB = PanelHub()
