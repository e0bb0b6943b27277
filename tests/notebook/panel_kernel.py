"""A real kernel with forge loaded, driven as the side panel drives it: comms opened to the
kernel's target, JSON sent on the shell channel, what the kernel publishes read on iopub — as
the labextension does over the websocket (test_panel_comm.py, test_cell_tools.py)."""

from __future__ import annotations

import json
import os
import queue
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jupyter_client.manager import KernelManager

from forge_jupyter.model_choice import PROVIDER_DEFAULTS
from forge_jupyter.notebook import ops as protocol
from tests.notebook.nb_kernel import Result, collect, shell_reply

TARGET = "forge.panel"
# Every message a panel receives is one notebook/ops.py declares, exactly (no extra key).
PANEL_MESSAGE = protocol.adapter("PanelMessage")


class PanelKernel:
    """A kernel with forge loaded, its log kept, and the comms a panel opens to it."""

    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        self.log_path = cwd / "kernel.log"
        self._log = open(self.log_path, "w")  # noqa: SIM115 - open for the kernel's lifetime
        self.km = KernelManager(kernel_name="python3")
        self.km.kernel_spec.argv[0] = sys.executable
        # No provider key of this machine: the info's model list is the configured model only.
        base = {k: v for k, v in os.environ.items() if k not in {var for var, _ in PROVIDER_DEFAULTS}}
        self.km.start_kernel(env={**base, **env}, cwd=str(cwd), stdout=self._log,
                             stderr=self._log)
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)
        self.received: dict[str, list[dict[str, Any]]] = {}  # comm id → data, in order
        self.opened: list[dict[str, Any]] = []  # comm_open contents the kernel sent
        self.closed: list[str] = []  # comm ids the kernel closed

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)
        self._log.close()

    # -- the panel's side of the comm -----------------------------------------------------

    def open_panel(self, hello: bool = True) -> str:
        comm_id = uuid.uuid4().hex
        self.received[comm_id] = []
        msg = self.kc.session.msg("comm_open", {"comm_id": comm_id, "target_name": TARGET,
                                                "data": {}})
        self.kc.shell_channel.send(msg)
        self.wait_handled(msg["header"]["msg_id"])
        if hello:
            self.send(comm_id, {"type": "hello"})
        return comm_id

    def send(self, comm_id: str, data: Any, wait: bool = True) -> list[dict[str, Any]]:
        """Send ``data`` on the comm; with ``wait``, what the comm received while the kernel
        handled it."""
        before = len(self.received.setdefault(comm_id, []))
        msg = self.kc.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
        self.kc.shell_channel.send(msg)
        if wait:
            self.wait_handled(msg["header"]["msg_id"])
        return self.received[comm_id][before:]

    def close_panel(self, comm_id: str) -> None:
        msg = self.kc.session.msg("comm_close", {"comm_id": comm_id, "data": {}})
        self.kc.shell_channel.send(msg)
        self.wait_handled(msg["header"]["msg_id"])

    def wait_handled(self, msg_id: str, timeout: float = 30) -> None:
        self.pump(lambda m: m["msg_type"] == "status" and m["parent_header"].get("msg_id") == msg_id
                  and m["content"]["execution_state"] == "idle", timeout)

    def pump(self, done: Callable[[dict[str, Any]], bool], timeout: float = 30,
             on_comm: Callable[[str, dict[str, Any]], None] | None = None) -> None:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"nothing ended the wait within {timeout} s")
            try:
                msg = self.kc.get_iopub_msg(timeout=min(left, 1))
            except queue.Empty:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "comm_open" and content.get("target_name") == TARGET:
                self.opened.append(content)
                self.received.setdefault(content["comm_id"], [])
            elif kind == "comm_msg" and content["comm_id"] in self.received:
                data = json.loads(json.dumps(content["data"]))  # what a browser gets
                PANEL_MESSAGE.validate_python(data, strict=True)
                self.received[content["comm_id"]].append(data)
                if on_comm is not None:
                    on_comm(content["comm_id"], data)
            elif kind == "comm_close":
                self.closed.append(content["comm_id"])
            if done(msg):
                return

    def run(self, code: str, timeout: float = 120, store_history: bool = True,
            on_comm: Callable[[str, dict[str, Any]], None] | None = None) -> Result:
        msg_id = self.kc.execute(code, store_history=store_history)
        result = Result(status="?")

        self.pump(lambda msg: msg["parent_header"].get("msg_id") == msg_id and collect(result, msg),
                  timeout, on_comm)
        result.status = shell_reply(self.kc, msg_id, timeout)["content"]["status"]
        return result


def tool_results(server: Any) -> list[str]:
    """The tool results the fake server's last request carried after its last assistant
    message: what the model read of the calls it made."""
    messages = server.requests[-1].messages
    last = max(i for i, m in enumerate(messages) if m["role"] == "assistant")
    return [m["content"] for m in messages[last:] if m["role"] == "tool"]

