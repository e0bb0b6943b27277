"""A real IPython kernel driven over jupyter_client, collecting what a frontend would show."""

from __future__ import annotations

import os
import queue
import sys
from dataclasses import dataclass, field
from typing import Any

from jupyter_client.manager import KernelManager


@dataclass
class Result:
    status: str
    stdout: str = ""
    stderr: str = ""
    results: list[dict[str, Any]] = field(default_factory=list)  # execute_result data bundles
    displays: list[dict[str, Any]] = field(default_factory=list)
    error: dict[str, Any] | None = None

    @property
    def text(self) -> str:
        return self.stdout + self.stderr + "".join(
            str(r.get("text/plain", "")) for r in self.results)


def collect(result: Result, msg: dict[str, Any]) -> bool:
    """Add what one iopub message of a cell's run shows to ``result``; True when it is the
    idle status that ends the run."""
    kind, content = msg["msg_type"], msg["content"]
    if kind == "stream":
        if content["name"] == "stdout":
            result.stdout += content["text"]
        else:
            result.stderr += content["text"]
    elif kind == "execute_result":
        result.results.append(content["data"])
    elif kind in ("display_data", "update_display_data"):
        result.displays.append(content["data"])
    elif kind == "error":
        result.error = content
    return kind == "status" and content["execution_state"] == "idle"


def shell_reply(kc: Any, msg_id: str, timeout: float = 30) -> dict[str, Any]:
    """The shell reply to ``msg_id``. Others are skipped: under load ``wait_for_ready`` sends a
    second kernel_info_request, whose late reply would otherwise be read as the reply to
    whatever is asked next."""
    while True:
        reply = kc.get_shell_msg(timeout=timeout)
        if reply["parent_header"].get("msg_id") == msg_id:
            return reply


class Kernel:
    def __init__(self, env: dict[str, str], cwd: str) -> None:
        self.km = KernelManager(kernel_name="python3")
        self.km.kernel_spec.argv[0] = sys.executable  # this venv's Python
        self.km.start_kernel(env={**os.environ, **env}, cwd=cwd)
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)

    def run(self, code: str, timeout: float = 120) -> Result:
        msg_id = self.kc.execute(code, store_history=True)
        result = Result(status="?")
        while True:
            try:
                msg = self.kc.get_iopub_msg(timeout=timeout)
            except queue.Empty:
                raise TimeoutError(f"no output for {timeout} s running:\n{code}") from None
            if msg["parent_header"].get("msg_id") == msg_id and collect(result, msg):
                break
        result.status = self.reply(msg_id, timeout)["content"]["status"]
        return result

    def reply(self, msg_id: str, timeout: float = 30) -> dict[str, Any]:
        return shell_reply(self.kc, msg_id, timeout)

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


def usage_error(r: Result) -> bool:
    """IPython shows a UsageError as one line on stderr, without a traceback."""
    return r.stderr.startswith("UsageError: ") and r.error is None


def forge_kernel(api_base: str, root: Any, env: dict[str, str] | None = None, *,
                 key: str | None = "sk-fake", model: str = "openai/gpt-4o-mini") -> Kernel:
    """A kernel with forge_jupyter loaded, talking to the fake model server at ``api_base``,
    its store in ``root`` (text mode: no frontend answers the widget here)."""
    base = {"FORGE_MODEL": model, "FORGE_API_BASE": api_base,
            "FORGE_DB": str(root / "forge.duckdb"), "FORGE_WIDGET": "off"}
    if key is not None:
        base["FORGE_API_KEY"] = key
    k = Kernel({**base, **(env or {})}, cwd=str(root))
    loaded = k.run("%load_ext forge_jupyter")
    assert loaded.status == "ok", loaded.text
    return k


# How the notebook context note begins (forge_jupyter/notebook/cells/note.py): a notebook
# kernel's prompt carries it after the person's words.
NOTE_START = "\n\n[Notebook context, written by forge:"


def person_text(content: str) -> str:
    """A user message's text as the model got it, less the notebook context note: the
    person's words exactly (the note, when there, is whole and last)."""
    words, found, note = content.partition(NOTE_START)
    assert not found or note.endswith("]"), content
    return words


def prompt_sent(request: Any) -> str:
    """The person's words in a request's last user message (``person_text``)."""
    return person_text(request.messages[-1]["content"])
