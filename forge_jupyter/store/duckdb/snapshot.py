"""A snapshot of the store for people who want to look: a byte copy that nobody holds.

A DuckDB client that opens the store itself takes the file from forge-jupyter for as long as
it keeps it open (forge's writes then wait beside it, pending.py), and a reader that polls —
connects, queries, closes — meets "Conflicting lock" whenever a kernel is writing. A snapshot
is neither: ``forge-jupyter snapshot OUT`` copies the store's whole state (its pending copy
while one waits) under the queue lock, between two writes, to ``OUT`` by way of a temporary
name and a rename, so a reader of ``OUT`` never sees half a copy and never holds forge's file.
``--every SECONDS`` keeps it fresh, copying again only after the store changed.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

from .file import shared_file
from .pending import copy_whole, signature


class SnapshotRefused(ValueError):
    """The snapshot's path would overwrite the store, or is not a plain file's place."""


def take_snapshot(db: Path, out: Path, *, timeout: float = 30.0) -> Path:
    """Copy the store at ``db`` to ``out`` (replaced whole); returns ``out``."""
    db, out = Path(db).expanduser(), Path(out).expanduser()
    if not db.exists():
        raise SnapshotRefused(f"no store at {db}: give the path of a forge-jupyter DuckDB file")
    file = shared_file(db)
    real = os.path.realpath(out)
    if real in {os.path.realpath(p) for p in (file.path, *file.pending.files(), file.lock_path)}:
        raise SnapshotRefused(f"{out} is the store itself (or a file of it): choose another "
                              "path for the snapshot")
    if os.path.isdir(real):
        raise SnapshotRefused(f"{out} is a folder: name a file in it, e.g. {out / 'forge.duckdb'}")
    with file.settled(timeout) as source:
        copy_whole(source, out)
    return out


def keep_fresh(db: Path, out: Path, every: float, *, rounds: int | None = None,
               said: Callable[[str], None] = print) -> None:
    """Take a snapshot now and again every ``every`` seconds when the store changed."""
    db = Path(db).expanduser()
    pending = shared_file(db).pending
    seen: tuple[list[int], list[int]] | None = None
    n = 0
    while rounds is None or n < rounds:
        now = (signature(db), signature(pending.path))
        if now != seen:
            take_snapshot(db, out)
            seen = (signature(db), signature(pending.path))
            said(f"{time.strftime('%H:%M:%S')} snapshot of {db} written to {out}")
        n += 1
        if rounds is None or n < rounds:
            time.sleep(every)
