"""Deprecated name of ``forge_jupyter.store.postgres.schema`` (the PostgreSQL migrations and the
``python -m`` migrate command); kept so existing scripts and DBA runbooks keep working."""

from __future__ import annotations

import warnings

from .postgres.schema import *  # noqa: F403 - the old module's names
from .postgres.schema import main

warnings.warn(
    "forge_jupyter.store.postgres_schema is now forge_jupyter.store.postgres.schema; "
    "run `python -m forge_jupyter.store.postgres.schema …` instead",
    DeprecationWarning, stacklevel=2,
)

if __name__ == "__main__":
    raise SystemExit(main())
