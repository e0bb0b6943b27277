"""The Jupyter server extension behind the side panel: a read-only REST API over the store.

``GET /forge/api/…`` (docs/api.md): sessions, one session, its messages and parts page by page,
cost totals — for the server's tenant only, behind Jupyter's own authentication. Enabled by
``jupyter-config/server-config/forge_jupyter.json``, which ``pip install`` puts in
``etc/jupyter/jupyter_server_config.d/``; ``jupyter server extension list`` shows it.
Importing this package loads nothing heavy: the handlers load with the server.
"""

from __future__ import annotations

from typing import Any


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "forge_jupyter.server"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    from .app import load

    load(serverapp)


def _unload_jupyter_server_extension(serverapp: Any) -> None:
    from .app import unload

    unload(serverapp)
