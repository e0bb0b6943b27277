"""``python``: run code in the notebook's own namespace (the kernel's variables).

The code runs in a worker thread so the kernel's event loop stays free (the widget's stop and
approval buttons keep working). What it prints is captured — and streamed live to the person —
by a router on ``sys.stdout``/``sys.stderr`` that sends only this thread's writes to the tool;
other threads print as usual. The value of a last expression is returned as its repr; images
and matplotlib figures are summarized for the model ("image/png 640×480, shown to the user")
and handed to the notebook to display. Stopping the run raises KeyboardInterrupt inside the
running code.
"""

from __future__ import annotations

import ast
import base64
import ctypes
import io
import itertools
import linecache
import sys
import threading
import traceback
from collections.abc import Callable
from typing import Any

from ..errors import ToolError
from .base import Tool, ToolContext, ToolResult, title_line
from .threads import run_in_tool_thread
from .truncate import BoundedOutput

_cells = itertools.count(1)
_sinks: dict[int, Callable[[str, str], None]] = {}
_install_lock = threading.Lock()
VALUE_REPR_LIMIT = 20_000


class _Router(io.TextIOBase):
    """Sends writes of a thread running tool code to that tool; everything else passes on."""

    def __init__(self, original: Any, name: str) -> None:
        self.original = original
        self.stream_name = name

    def write(self, s: str) -> int:
        sink = _sinks.get(threading.get_ident())
        if sink is not None:
            sink(self.stream_name, s)
            return len(s)
        return self.original.write(s)

    def flush(self) -> None:
        if threading.get_ident() not in _sinks:
            self.original.flush()

    def isatty(self) -> bool:
        return False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.original, name)


def _install_router() -> None:
    with _install_lock:
        if not isinstance(sys.stdout, _Router):
            sys.stdout = _Router(sys.stdout, "stdout")
        if not isinstance(sys.stderr, _Router):
            sys.stderr = _Router(sys.stderr, "stderr")


def _compile(code: str) -> tuple[Any, Any, str]:
    filename = f"<forge-cell-{next(_cells)}>"
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    tree = ast.parse(code, filename, "exec")
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    body = compile(tree, filename, "exec")
    tail = compile(last, filename, "eval") if last is not None else None
    return body, tail, filename


def _user_traceback(exc: BaseException) -> str:
    """The traceback without this module's own frames."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(exc), exc, tb))


def _png_size(png: bytes) -> tuple[int, int] | None:
    if png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) >= 24:
        return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    return None


def _figures_since(before: set[int]) -> list[bytes]:
    """New matplotlib figures rendered to PNG and closed (as the inline backend would)."""
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return []
    pngs = []
    for num in sorted(set(plt.get_fignums()) - before):
        fig = plt.figure(num)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", bbox_inches="tight")
        plt.close(fig)
        pngs.append(buf.getvalue())
    return pngs


def _value_png(value: Any) -> bytes | None:
    fig_cls = getattr(sys.modules.get("matplotlib.figure"), "Figure", None)
    if fig_cls is not None and isinstance(value, fig_cls):
        buf = io.BytesIO()
        value.savefig(buf, format="png", bbox_inches="tight")
        return buf.getvalue()
    repr_png = getattr(value, "_repr_png_", None)
    if callable(repr_png):
        try:
            png = repr_png()
        except Exception:
            return None
        return png if isinstance(png, bytes) else None
    return None


def _run_in_thread(code: str, namespace: dict[str, Any], sink: Callable[[str, str], None],
                   started: threading.Event, box: dict[str, Any]) -> None:
    box["thread"] = threading.get_ident()
    _sinks[box["thread"]] = sink
    plt = sys.modules.get("matplotlib.pyplot")
    before = set(plt.get_fignums()) if plt is not None else set()
    started.set()
    try:
        body, tail, _ = _compile(code)
        exec(body, namespace)
        box["value"] = eval(tail, namespace) if tail is not None else None
    except BaseException as exc:  # the code's own failure, KeyboardInterrupt from stop included
        box["error"] = exc
    finally:
        try:
            box["figures"] = _figures_since(before)
        except Exception:
            box["figures"] = []
        _sinks.pop(box["thread"], None)


async def run_python(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    code = args["code"]
    namespace = ctx.namespace
    out = BoundedOutput(ctx.output_dir, f"{ctx.part_id}-stdout")
    lock = threading.Lock()

    def sink(stream: str, text: str) -> None:
        with lock:
            out.write(text)
        if ctx.emit_output is not None:
            ctx.emit_output(stream, text)

    _install_router()
    started = threading.Event()
    box: dict[str, Any] = {}
    box_lock = threading.Lock()  # an interrupt lands in the code, never after it ended

    def target() -> None:
        try:
            _run_in_thread(code, namespace, sink, started, box)
        finally:
            with box_lock:
                box["finished"] = True
                # an interrupt set just as the code ended: cleared, so it cannot fire later
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(threading.get_ident()),
                                                           None)

    def interrupt() -> None:  # Stop or the timeout: KeyboardInterrupt where the code runs
        started.wait(1)
        with box_lock:
            if "thread" in box and not box.get("finished"):
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(box["thread"]),
                                                           ctypes.py_object(KeyboardInterrupt))

    ctx.stop.on_stop(interrupt)
    # a tool thread (tools/threads.py): stopped, it is given 5 s to unwind before it is left
    await run_in_tool_thread(target, name="python", stop=ctx.stop, grace=5.0)

    displays = []
    pngs = list(box.get("figures", []))
    value = box.get("value")
    value_png = _value_png(value) if value is not None else None
    if value_png:
        pngs.append(value_png)
    for png in pngs:
        size = _png_size(png)
        label = f"image/png {size[0]}×{size[1]}" if size else "image/png"
        displays.append(label + (", shown to the user" if ctx.display_available
                                 else " (no display here to show it)"))
        if ctx.emit_display is not None:
            ctx.emit_display({"image/png": base64.b64encode(png).decode(), "text/plain": label})

    captured = out.result()
    printed = captured.text
    pieces = [printed.rstrip("\n")] if printed else []
    if "error" in box:
        exc = box["error"]
        if isinstance(exc, KeyboardInterrupt):
            pieces.append("KeyboardInterrupt: the code was interrupted")
        else:
            pieces.append(_user_traceback(exc).rstrip())
        raise ToolError("\n".join(pieces))
    if value is not None and not value_png:
        text = repr(value)
        if len(text) > VALUE_REPR_LIMIT:
            text = text[:VALUE_REPR_LIMIT] + f"\n… (repr cut at {VALUE_REPR_LIMIT:,} characters)"
        pieces.append(text)
    pieces.extend(f"[{d}]" for d in displays)
    output = "\n".join(pieces) if pieces else "(no output)"
    meta: dict[str, Any] = {"displays": displays} if displays else {}
    if captured.truncated:  # cut here already, with the full output saved: not again
        meta["truncated"] = {"total_lines": captured.total_lines,
                             "total_bytes": captured.total_bytes, "saved": captured.saved_path}
    return ToolResult(output, title=title_line(code) or "python",
                      metadata=meta)


def python_tool() -> Tool:
    return Tool(
        name="python",
        description=(
            "Run Python code in the notebook's kernel, in the person's own namespace: their "
            "variables and DataFrames are available, and variables you define stay. Returns "
            "what the code prints (stdout and stderr), the repr of the last expression's value, "
            "a one-line summary of each image or plot (the person sees the plot itself), or the "
            "traceback if it raised."
        ),
        parameters={
            "type": "object",
            "properties": {"code": {"type": "string", "description": "Python source to run"}},
            "required": ["code"],
            "additionalProperties": False,
        },
        execute=run_python,
        mutating=True,
        subject_arg="code",
    )
