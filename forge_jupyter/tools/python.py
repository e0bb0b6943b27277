"""``python``: run code in the notebook's own namespace (the kernel's variables).

The code runs in a worker thread so the kernel's event loop stays free (the widget's stop and
approval buttons keep working). What it prints is captured — and streamed live to the person —
by a router on ``sys.stdout``/``sys.stderr`` that sends only this thread's writes to the tool;
other threads print as usual. What it displays — ``display(x)``, ``plt.show()``, the figures it
leaves open, a Figure or image as its last expression — stays in the call's card, each figure
once, and is summarized for the model ("image/png 640×480, shown to the user"): see
tools/python_displays.py; the images themselves go back with the result, for a vision model. Otherwise the value of a last expression is returned as its repr.
Stopping the run raises KeyboardInterrupt inside the running code.
"""

from __future__ import annotations

import ast
import asyncio
import ctypes
import inspect
import io
import itertools
import linecache
import sys
import threading
import traceback
from collections.abc import Callable
from typing import Any

from ..errors import ToolError
from . import python_displays as displays
from .base import ShownImage, Tool, ToolContext, ToolResult, title_line
from .nested import running_code
from .threads import Stop, run_in_tool_thread
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
    # top-level await runs as in a cell (the code's own loop, in its thread)
    body = compile(tree, filename, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    tail = (compile(last, filename, "eval", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
            if last is not None else None)
    return body, tail, filename


def _evaluate(code: Any, namespace: dict[str, Any]) -> Any:
    result = eval(code, namespace)
    return asyncio.run(result) if inspect.iscoroutine(result) else result


def user_traceback(exc: BaseException) -> str:
    """The traceback without this module's own frames."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(exc), exc, tb))


def _run_in_thread(code: str, namespace: dict[str, Any], sink: Callable[[str, str], None],
                   shown: displays.Shown, started: threading.Event, box: dict[str, Any],
                   tool: str) -> None:
    box["thread"] = threading.get_ident()
    _sinks[box["thread"]] = sink
    started.set()
    try:
        with displays.capturing(shown), running_code(tool):
            before = displays.open_figures()
            try:
                body, tail, _ = _compile(code)
                _evaluate(body, namespace)
                box["value"] = _evaluate(tail, namespace) if tail is not None else None
            except BaseException as exc:  # the code's own failure, KeyboardInterrupt from stop
                box["error"] = exc
            try:  # figures left open are shown even when the code failed, as in a cell
                value = box.get("value")
                box["value_shown"] = displays.finish(shown, before, value, "error" not in box)
            except KeyboardInterrupt as exc:  # stopped while a figure was being drawn
                box.setdefault("error", exc)
            except Exception:  # a figure that cannot be drawn is not the code's failure
                pass
    finally:
        _sinks.pop(box["thread"], None)


async def execute(code: str, namespace: dict[str, Any], sink: Callable[[str, str], None],
                  shown: displays.Shown, stop: Stop, tool: str = "python") -> dict[str, Any]:
    """Run ``code`` in ``namespace`` in a tool thread of its own: what it prints to ``sink``
    (stream, text), what it displays to ``shown``; ``stop`` raises KeyboardInterrupt in it.
    Returns what happened: ``value`` (its last expression's), ``value_shown`` (taken as a
    display), ``error`` (what it raised)."""
    _install_router()
    displays.install()
    started = threading.Event()
    box: dict[str, Any] = {}
    box_lock = threading.Lock()  # an interrupt lands in the code, never after it ended

    def target() -> None:
        try:
            _run_in_thread(code, namespace, sink, shown, started, box, tool)
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

    stop.on_stop(interrupt)
    # a tool thread (tools/threads.py): stopped, it is given 5 s to unwind before it is left
    await run_in_tool_thread(target, name=tool, stop=stop, grace=5.0)
    return box


async def run_python(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    code = args["code"]
    out = BoundedOutput(ctx.output_dir, f"{ctx.part_id}-stdout")
    lock = threading.Lock()

    def sink(stream: str, text: str) -> None:
        with lock:
            out.write(text)
        if ctx.emit_output is not None:
            ctx.emit_output(stream, text)

    shown = displays.Shown(ctx.emit_display, ctx.display_available)
    box = await execute(code, ctx.namespace, sink, shown, ctx.stop)

    captured = out.result()
    printed = captured.text
    pieces = [printed.rstrip("\n")] if printed else []
    told = shown.told()
    if "error" in box:
        exc = box["error"]
        if isinstance(exc, KeyboardInterrupt):
            pieces.append("KeyboardInterrupt: the code was interrupted")
        else:
            pieces.append(user_traceback(exc).rstrip())
        pieces[-1:-1] = told  # what it showed before it failed, then why it failed
        raise ToolError("\n".join(pieces))
    value = box.get("value")
    if value is not None and not box.get("value_shown"):
        text = repr(value)
        if len(text) > VALUE_REPR_LIMIT:
            text = text[:VALUE_REPR_LIMIT] + f"\n… (repr cut at {VALUE_REPR_LIMIT:,} characters)"
        pieces.append(text)
    pieces.extend(told)
    output = "\n".join(pieces) if pieces else "(no output)"
    images = [i.told[1:-1] for i in shown.items if i.image]
    meta: dict[str, Any] = {"displays": images} if images else {}
    if captured.truncated:  # cut here already, with the full output saved: not again
        meta["truncated"] = {"total_lines": captured.total_lines,
                             "total_bytes": captured.total_bytes, "saved": captured.saved_path}
    # the images themselves: kept by the run and sent to a vision model (session/images.py)
    shown_images = [ShownImage(data, mime, label) for mime, data, label in shown.images()]
    return ToolResult(output, title=title_line(code) or "python", metadata=meta,
                      images=shown_images)


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
