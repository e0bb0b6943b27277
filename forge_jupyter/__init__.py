"""forge-jupyter: an agent harness inside the Jupyter kernel.

``import forge_jupyter`` stays fast: litellm, DuckDB and IPython load on first use.
"""

from __future__ import annotations

from typing import Any

from ._version import __version__

__all__ = ["Forge", "Session", "Message", "__version__"]


def __getattr__(name: str) -> Any:
    from .history_data import HistoryData  # light: the standard library only

    # History as data, on the notebook's Forge: forge_jupyter.sessions(), .costs(by="day"), …
    if name in HistoryData.FORWARDED:
        return getattr(current().data, name)
    if name == "Forge":
        from .forge import Forge

        return Forge
    if name == "Session":
        from .session.session import Session

        return Session
    if name == "Message":
        from .message import Message

        return Message
    raise AttributeError(f"module 'forge_jupyter' has no attribute {name!r}")


# -- the notebook surface ------------------------------------------------------------------

def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext forge_jupyter``: register %%forge and %forge. Fast: nothing heavy loads."""
    from .notebook.extension import load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    from .notebook.extension import unload

    unload(ipython)


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    """The prebuilt JupyterLab extension (labextension/, built into forge_jupyter/labextension
    by the package build; installed as shared data too, so JupyterLab finds it either way)."""
    return [{"src": "labextension", "dest": "forge-jupyter"}]


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    """The server extension behind the side panel (forge_jupyter/server: the REST API), so that
    ``jpserver_extensions = {"forge_jupyter": true}`` enables it; nothing heavy loads here."""
    from .server import _jupyter_server_extension_points as points

    return points()


def current() -> Any:
    """The notebook's Forge (after ``%load_ext forge_jupyter``)."""
    from .notebook.extension import controller

    return controller().forge


def tool(fn: Any = None, *, name: str | None = None, mutating: bool = False,
         timeout: float | None = None) -> Any:
    """Decorator: register a function as a tool of the notebook's default Forge."""
    from .notebook.extension import controller
    from .tools.base import tool_from_function

    def register(f: Any) -> Any:
        controller().add_tool(tool_from_function(f, name=name, mutating=mutating, timeout=timeout))
        return f

    return register(fn) if fn is not None else register
