"""Where the server extension meets the server: its settings, its thread pool, its routes.

The tenant and the store file are the server's configuration — ``c.Forge.db`` /
``FORGE_DB`` and ``c.Forge.tenant`` / ``FORGE_TENANT``, read by the same ``Forge``
Configurable (config.py) with the same precedence and defaults as in the kernels — and never
come from a request. The file's default is the kernels' (``store.location.default_db_path``).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from jupyter_server.utils import url_path_join

from ..config import Forge as ForgeConfig
from .handlers import ROUTES
from .reader import HistoryReader

READ_THREADS = 2  # requests read one at a time anyway (one file, one lock); a second keeps
# a read that waits behind a kernel's write from holding up a request that needs no file


def store_path(db: str) -> Path | None:
    """The file ``Forge.db`` names, as the kernels resolve it (``store.location.locate``); None for
    ``:memory:``, which no other process can read, and for a PostgreSQL URL (never a path: no
    folder is made from it; the reader connects to it instead)."""
    from ..store.location import locate

    where = locate(db or None)
    return where.path.absolute() if where.path is not None else None


def reader_for(serverapp: Any) -> HistoryReader:
    from ..store.location import locate

    config = ForgeConfig(parent=serverapp)
    where = locate(config.db or None)
    if where.url is not None:  # the kernels' database, read as the same tenant
        return HistoryReader(None, config.tenant, url=where.url)
    if where.path is None:
        serverapp.log.warning("forge_jupyter: Forge.db is ':memory:', which this server cannot "
                              "read; the panel's history stays empty. Set FORGE_DB (or "
                              "c.Forge.db) to the kernels' DuckDB file or PostgreSQL URL.")
        return HistoryReader(None, config.tenant)
    return HistoryReader(where.path.absolute(), config.tenant)


def load(serverapp: Any) -> None:
    reader = reader_for(serverapp)
    executor = ThreadPoolExecutor(READ_THREADS, thread_name_prefix="forge-api")
    base = serverapp.web_app.settings["base_url"]
    serverapp.web_app.add_handlers(".*$", [
        (url_path_join(base, pattern), handler, {"reader": reader, "executor": executor})
        for pattern, handler in ROUTES
    ])
    serverapp.web_app.settings["forge_reader"] = reader
    serverapp.log.info("forge_jupyter: /forge/api/ serves tenant %r of %s", reader.tenant,
                       reader.where)


def unload(serverapp: Any) -> None:
    """At the server's shutdown: close the store (a PostgreSQL pool's connections)."""
    reader = serverapp.web_app.settings.pop("forge_reader", None)
    if reader is not None:
        reader.close()
