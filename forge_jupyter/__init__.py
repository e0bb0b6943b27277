"""forge-jupyter: an agent harness inside the Jupyter kernel.

``import forge_jupyter`` stays fast: litellm, DuckDB and IPython load on first use.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"
__all__ = ["Forge", "Session", "Message", "__version__"]


def __getattr__(name: str) -> Any:
    if name == "Forge":
        from .forge import Forge

        return Forge
    if name == "Session":
        from .session.session import Session

        return Session
    if name == "Message":
        from .model import Message

        return Message
    raise AttributeError(f"module 'forge_jupyter' has no attribute {name!r}")
