"""The kernel's status reads Busy for as long as a ``%%forge`` cell runs.

While a cell awaits its turn, JupyterLab still talks to the kernel: its widget manager asks
for a subshell (``create_subshell_request``), the debugger sends ``debug_request``s. Each is
answered with a status ``busy`` → ``idle`` pair, and JupyterLab shows the kernel's status as the
last status message it saw, whatever request it answers — so the status bar read Idle while
the cell was still running. (JupyterLab ignores the statuses of a few request types, set by
the server's ``untracked_message_types``; ``create_subshell_request`` is not one of them.)

The idle that ends such a request must still be sent: the frontend waits for it to complete
the request. So right after it, this publishes ``busy`` again, as a reply to the running
cell's own request; a frontend that tracks requests sees nothing new, the status bar sees
Busy.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator
from typing import Any

log = logging.getLogger(__name__)


class BusyWhileRunning:
    """Installed on the kernel by ``%load_ext``; ``running(parent)`` spans one cell's turn."""

    def __init__(self, kernel: Any) -> None:
        self.kernel = kernel
        self._cells: list[dict[str, Any]] = []  # parents of the cells running a turn now
        self._lock = threading.Lock()
        self._original: Any = None

    def install(self) -> bool:
        publish = getattr(self.kernel, "_publish_status", None)
        if publish is None or self._original is not None:
            return False
        self._original = publish

        def publish_status(status: str, channel: str, parent: Any = None) -> None:
            publish(status, channel, parent)
            if status == "idle":
                self._busy_again(channel, parent)

        self.kernel._publish_status = publish_status  # an instance attribute: only this kernel
        return True

    def uninstall(self) -> None:
        if self._original is not None and getattr(self.kernel, "_publish_status", None) is not self._original:
            with contextlib.suppress(AttributeError):
                del self.kernel._publish_status  # the class's method shows through again
        self._original = None

    @contextlib.contextmanager
    def running(self, parent: dict[str, Any] | None) -> Iterator[None]:
        """While the block runs, an idle for any other request is followed by busy."""
        if not isinstance(parent, dict) or not parent.get("header"):
            yield
            return
        with self._lock:
            self._cells.append(parent)
        try:
            yield
        finally:
            with self._lock:
                if parent in self._cells:
                    self._cells.remove(parent)

    def _busy_again(self, channel: str, parent: Any) -> None:
        with self._lock:
            cell = self._cells[-1] if self._cells else None
        if cell is None or self._original is None:
            return
        ended = parent if isinstance(parent, dict) else None
        if ended is not None and ended.get("header", {}).get("msg_id") == cell["header"].get("msg_id"):
            return  # the cell's own idle: it is over
        try:
            self._original("busy", "shell", cell)
        except Exception:  # the kernel is shutting down: nothing to correct
            log.debug("forge: could not restate the busy status", exc_info=True)


def cell_parent(kernel: Any) -> dict[str, Any] | None:
    """The request of the cell running now (called from the cell's own task)."""
    try:
        return kernel.get_parent("shell")
    except TypeError:  # ipykernel < 6.27: no channel argument
        return kernel.get_parent()
    except Exception:
        return None
