"""Loading and unloading the IPython extension.

``%load_ext forge_jupyter`` registers the magics and returns at once; the model client loads
in a background thread (``warmup.py``) while the person types the first prompt.
"""

from __future__ import annotations

from typing import Any

from . import revert_line, terminal_input
from .controller import NotebookForge

_controller: NotebookForge | None = None


def load(ipython: Any) -> None:
    global _controller
    from .kernel_status import BusyWhileRunning
    from .magics import ForgeMagics, transform_forge_cells
    from .panel import HUB
    from .warmup import Warmup

    if _controller is not None and _controller.shell is ipython:
        return  # loaded already (a second %load_ext)
    _controller = NotebookForge(ipython)
    magics = ForgeMagics(ipython, _controller)
    ipython.register_magics(magics)
    ipython._forge_magics = magics
    ipython._forge_revert = revert_line.awaiter(_controller)
    for transform in (transform_forge_cells, revert_line.transform_revert_lines):
        if transform not in ipython.input_transformers_cleanup:
            ipython.input_transformers_cleanup.append(transform)
    if _controller.config not in ipython.configurables:
        ipython.configurables.append(_controller.config)
    kernel = getattr(ipython, "kernel", None)
    terminal_input.install(ipython)  # terminal IPython only: a kernel's frontend decides
    if kernel is not None:
        _controller.status = BusyWhileRunning(kernel)
        _controller.status.install()
    _controller.run_log.install()  # what ran, for notebook_read and the context note
    _controller.warmup = Warmup(_controller).start()
    HUB.install(ipython, _controller)  # the side panel's comm target, and a comm to the frontend's


def unload(ipython: Any) -> None:
    global _controller
    from .magics import transform_forge_cells
    from .panel import HUB

    HUB.uninstall()
    terminal_input.uninstall(ipython)
    for transform in (transform_forge_cells, revert_line.transform_revert_lines):
        if transform in ipython.input_transformers_cleanup:
            ipython.input_transformers_cleanup.remove(transform)
    if _controller is not None:
        if _controller.config in ipython.configurables:
            ipython.configurables.remove(_controller.config)
        if _controller.status is not None:
            _controller.status.uninstall()
        _controller.run_log.uninstall()
        _controller.close()
    _controller = None


def controller() -> NotebookForge:
    if _controller is None:
        raise RuntimeError("forge_jupyter is not loaded in this kernel: run %load_ext forge_jupyter")
    return _controller
