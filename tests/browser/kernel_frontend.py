"""A minimal widget frontend over jupyter_client: a real kernel, our side of the comm by hand.

It answers the TurnWidget's comm_open with the view's ``ready`` (as the JS does when it
renders), records every custom message the kernel sends to the view, and folds them the way
``labextension/src/render/state.ts`` does, so a test can compare what a view would show with the store.
"""

from __future__ import annotations

import datetime as dt
import queue
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jupyter_client.manager import KernelManager

from forge_jupyter.testing import FakeModelServer

WIDGET_ID = "forge_jupyter.notebook.widget.TurnWidget"

# Kernel-side helpers: a Forge on the fake model server (litellm imported before anything is
# timed), a synthetic stream through the real write entry from a worker thread, and the
# stored text of a session.
KERNEL_SETUP = """
import asyncio, json, os, time
from forge_jupyter import Forge
from forge_jupyter.message import Message, TextPart, now
from forge_jupyter.notebook.widget import TurnView
from forge_jupyter.session.writer import Writer
f = Forge(db=':memory:', builtin_tools=False, model='openai/fake-model',
          api_base={base!r}, api_key='sk-fake')
await f.session().prompt_async('warm up')

def synthetic_stream(session, n, pause_every=20):
    # n text deltas through the write entry, from a worker thread, as fast as it goes.
    w = Writer(f.projection, f.bus)
    m = Message(session_id=session.id, role='assistant', model='synthetic')
    w.update_message(m)
    w.append(session.id, m.id)
    p = TextPart(session_id=session.id, message_id=m.id, time_start=now())
    w.update_part(p)
    pieces = []
    for i in range(n):
        pieces.append(f't{{i}} ')
        w.part_delta(p, 'text', pieces[-1])
        if i % pause_every == pause_every - 1:
            time.sleep(0.002)
    p.text, p.time_end = ''.join(pieces).rstrip(), now()
    w.update_part(p)
    w.update_message(m.model_copy(update={{'status': 'completed', 'completed_at': now()}}))
    w.flush()

def stored_texts(session):
    return json.dumps({{p.id: p.text for m in session.messages() for p in m.parts
                       if p.type == 'text' and m.role == 'assistant'}})
"""


def max_in_window(times: list[float], window: float = 1.0) -> int:
    """The most messages sent within any ``window`` seconds."""
    best, start = 0, 0
    for end, t in enumerate(times):
        while t - times[start] > window:
            start += 1
        best = max(best, end - start + 1)
    return best


@dataclass
class Received:
    at: float  # kernel send time, seconds (header date)
    content: dict[str, Any]
    size: int


@dataclass
class ViewState:
    """state.js's reducer for what the tests compare: part rows and their streamed text."""

    parts: dict[str, dict[str, Any]] = field(default_factory=dict)
    messages: dict[str, dict[str, Any]] = field(default_factory=dict)
    seq: int = 0
    synced: bool = False
    resyncs: int = 0

    def receive(self, msg: dict[str, Any]) -> str:
        if msg["kind"] == "snapshot":
            self.parts, self.messages = {}, {}
            for op in msg["ops"]:
                self.apply(op)
            self.seq, self.synced = msg["seq"], True
            return "synced"
        if not self.synced:
            return "waiting"
        if msg["seq"] <= self.seq:
            return "stale"
        if msg["seq"] != self.seq + 1:
            self.synced = False
            self.resyncs += 1
            return "resync"
        for op in msg["ops"]:
            self.apply(op)
        self.seq = msg["seq"]
        return "applied"

    def apply(self, op: dict[str, Any]) -> None:
        if op["op"] == "part":
            self.parts[op["part"]["id"]] = dict(op["part"])
        elif op["op"] == "message":
            self.messages[op["message"]["id"]] = op["message"]
        elif op["op"] == "delta":
            part = self.parts.setdefault(op["id"], {"id": op["id"], "type": "text", "text": ""})
            part[op["field"]] = (part.get(op["field"]) or "") + op["text"]

    def texts(self) -> dict[str, str]:
        return {pid: p.get("text") or "" for pid, p in self.parts.items() if p.get("type") == "text"}


class KernelFrontend:
    def __init__(self, env: dict[str, str] | None = None, cwd: str | None = None) -> None:
        self.km = KernelManager(kernel_name="python3")
        self.km.start_kernel(env=env, cwd=cwd)
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)
        self.comm_id: str | None = None
        self.received: list[Received] = []
        self.view = ViewState()
        self.stdout: list[str] = []
        self.outputs: list[dict[str, Any]] = []  # display_data / update_display_data / execute_result
        self.answer_ready = True
        self.first_message: dict[str, Any] | None = None

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)

    def send_to_view(self, content: dict[str, Any]) -> None:
        """A message from the (pretend) view to the kernel: ready, hello, approve, stop."""
        assert self.comm_id is not None, "no TurnWidget comm is open"
        msg = self.kc.session.msg("comm_msg", {"comm_id": self.comm_id,
                                               "data": {"method": "custom", "content": content}})
        self.kc.shell_channel.send(msg)

    def run(self, code: str, timeout: float = 120, on_custom: Any = None) -> dict[str, Any]:
        """Execute ``code``; handle iopub until the kernel is idle again. Returns the reply."""
        msg_id = self.kc.execute(code)
        deadline = time.monotonic() + timeout
        idle = False
        while not idle:
            if time.monotonic() > deadline:
                raise TimeoutError(f"the cell did not finish within {timeout} s")
            try:
                msg = self.kc.get_iopub_msg(timeout=1)
            except queue.Empty:
                continue
            idle = self._handle(msg, msg_id, on_custom)
        reply = self.kc.get_shell_msg(timeout=30)
        while reply["parent_header"].get("msg_id") != msg_id:
            reply = self.kc.get_shell_msg(timeout=30)
        return reply["content"]

    def _handle(self, msg: dict[str, Any], msg_id: str, on_custom: Any) -> bool:
        kind, content = msg["msg_type"], msg["content"]
        if kind == "comm_open":
            state = content.get("data", {}).get("state", {})
            if state.get("_anywidget_id") == WIDGET_ID:
                self.comm_id = content["comm_id"]
                self.received.clear()
                self.view = ViewState()
                if self.first_message is not None:  # a bootstrap asks for the code first
                    self.send_to_view(self.first_message)
                elif self.answer_ready:
                    self.send_to_view({"type": "ready", "protocol": 1})
        elif kind == "comm_msg" and content.get("comm_id") == self.comm_id:
            data = content.get("data", {})
            if data.get("method") == "custom":
                body = data["content"]
                at = msg["header"]["date"]
                at = at.timestamp() if isinstance(at, dt.datetime) else time.time()
                self.received.append(Received(at, body, len(str(body))))
                if self.view.receive(body) == "resync":
                    self.send_to_view({"type": "hello"})
                if on_custom is not None:
                    on_custom(self, body)
        elif kind == "stream" and content.get("name") == "stdout":
            if msg["parent_header"].get("msg_id") == msg_id:
                self.stdout.append(content["text"])
        elif kind in ("display_data", "update_display_data", "execute_result"):
            self.outputs.append({"type": kind, **content})
        elif kind == "error" and msg["parent_header"].get("msg_id") == msg_id:
            raise RuntimeError("kernel error:\n" + "\n".join(content.get("traceback", [])))
        return (kind == "status" and content.get("execution_state") == "idle"
                and msg["parent_header"].get("msg_id") == msg_id)

    def batches(self) -> list[Received]:
        return [r for r in self.received if r.content.get("kind") == "batch"]


def kernel_env(server: FakeModelServer, root: Path) -> dict[str, str]:
    """What the kernels see: the fake model server as the configured model."""
    return {
        "FORGE_MODEL": "openai/fake-model",
        "FORGE_API_BASE": server.openai_base,
        "FORGE_API_KEY": "sk-fake",
        "FORGE_DB": str(root / "forge.duckdb"),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }
