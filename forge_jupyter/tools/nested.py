"""No turn from inside a turn: code a tool runs for the model (``python``, ``notebook_run``)
cannot start forge again, however it is spelled.

A source check cannot tell: ``%%forge``, ``get_ipython().run_cell("%%forge …")``,
``run_line_magic("forge", …)``, ``exec`` of a built string, ``Forge().session().prompt(…)``
all reach the same few doors. So the guard is at the doors: while a tool runs code, its thread
and context are marked (:func:`running_code`), and a run's claim (session/runner.py, which
every prompt and compaction passes) and forge's magics (notebook/magics.py) refuse to start
when they find the mark (:func:`refuse_nested`). The context travels into what the code runs
through IPython (``run_cell``'s own event loop, ``run_sync``'s helper thread copy it); a thread
the code starts itself carries neither mark: forge does not follow the code that far.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Iterator

from ..errors import NestedTurn

_tool: contextvars.ContextVar[str | None] = contextvars.ContextVar("forge_tool_code", default=None)
_threads: dict[int, str] = {}  # thread id → the tool whose code it runs now


@contextlib.contextmanager
def running_code(tool: str) -> Iterator[None]:
    """Mark the current thread and context as running ``tool``'s code for the block."""
    token = _tool.set(tool)
    ident = threading.get_ident()
    _threads[ident] = tool
    try:
        yield
    finally:
        _threads.pop(ident, None)
        _tool.reset(token)


def tool_running_code() -> str | None:
    """The tool whose code the caller runs inside, or None."""
    return _tool.get() or _threads.get(threading.get_ident())


def refuse_nested(what: str = "start a turn") -> None:
    """Raise NestedTurn when called from code a tool runs."""
    tool = tool_running_code()
    if tool is not None:
        raise NestedTurn(
            f"forge cannot {what} from code the {tool} tool runs: that would be a turn inside "
            "the turn that is running it. Do the work in this turn with your own tools, or "
            "write the prompt in your answer for the person to run.")
