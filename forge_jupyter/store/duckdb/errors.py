"""What can be wrong with the path of a DuckDB store, said so that a person can act on it.

A directory, a pipe or a device where the file should be; a name the OS refuses (too long, a
file where a folder should be, no permission); a file that is not a DuckDB database; and,
once open, DuckDB's own I/O failures: a file damaged after it was written (truncated, a bad
checksum) — StoreUnreadable — or a write that failed (a full disk) — StoreUnavailable, which
the projection answers by keeping its rows. Every message names the path and leaves the file
as it is.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import duckdb

from ...errors import StoreUnavailable, StoreUnreadable

_ELSEWHERE = "point forge-jupyter at another file (the FORGE_DB variable or the store's path)"
_OS_HINTS = {
    errno.ENAMETOOLONG: "The name is longer than the file system allows (255 bytes a name, "
                        "4096 a path on Linux): choose a shorter path",
    errno.EACCES: "Give this user read and write access to the file and its folder "
                  "(forge-jupyter also writes a .lock file beside it), or choose another path",
    errno.EPERM: "Give this user read and write access to the file and its folder, or choose "
                 "another path",
    errno.EROFS: "The file system is read-only: choose a path on a writable one",
    errno.ENOTDIR: "A part of the folder path is a file, not a folder: choose another path",
    errno.EEXIST: "A part of the folder path is a file, not a folder: choose another path",
    errno.ENOSPC: "The disk is full: free some space",
}


def path_error(path: Path, error: OSError, what: str = "the database file") -> StoreUnreadable:
    """An OS refusal of ``path`` as a message that names it and says what to do."""
    name = errno.errorcode.get(error.errno or 0, "")
    hint = _OS_HINTS.get(error.errno or 0, "Check the path")
    return StoreUnreadable(
        f"{path} cannot be used as {what}: {error.strerror or error}"
        f"{f' ({name})' if name else ''}. {hint}, or {_ELSEWHERE}. Nothing was written."
    )


def io_error(path: Path, error: duckdb.Error) -> StoreUnreadable | StoreUnavailable:
    """A DuckDB I/O error met while using the file: damaged (a read that found too few bytes,
    a bad checksum) or, otherwise, a failed write (a full disk)."""
    text = str(error)
    if "Could not read" in text or "Corrupt database file" in text or "checksum" in text:
        return StoreUnreadable(
            f"{path} is damaged: DuckDB could not read it ({text}). The file looks truncated "
            f"or partly overwritten. It was left as it is: restore it from a backup, or move "
            f"it away and {_ELSEWHERE}."
        )
    return StoreUnavailable(
        f"{path} could not be written ({text}). Free disk space or check the file system, "
        "then retry; the transaction was rolled back, and rows the session buffered are kept "
        "for the next flush."
    )


def check_header(path: Path) -> None:
    """Refuse, without writing a byte, a file that is not a DuckDB database."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as error:
        raise path_error(path, error) from error
    if stat.S_ISDIR(mode):
        raise StoreUnreadable(
            f"{path} is a directory, not a database file, so forge-jupyter cannot use it (it "
            f"was left untouched). Name a file inside it (e.g. {path / 'forge.duckdb'}), or "
            f"{_ELSEWHERE}."
        )
    if not stat.S_ISREG(mode):  # a FIFO would block the read below forever
        raise StoreUnreadable(
            f"{path} is not a regular file (a pipe, socket or device), so forge-jupyter cannot "
            f"use it (it was left untouched); {_ELSEWHERE}."
        )
    try:
        with open(path, "rb") as f:
            head = f.read(16)
    except FileNotFoundError:
        return
    except OSError as error:
        raise path_error(path, error) from error
    if len(head) >= 12 and head[8:12] == b"DUCK":
        return
    if not head:
        what = "an empty file"
    elif head.startswith(b"SQLite format 3"):
        what = "a SQLite database"
    else:
        what = "not a DuckDB database"
    raise StoreUnreadable(
        f"{path} is {what}, so forge-jupyter cannot use it (it was left untouched). "
        "Move it away, or point forge-jupyter at another file (the FORGE_DB variable or the "
        "store's path)."
    )


def translated(path: Path, error: duckdb.Error) -> StoreUnreadable | StoreUnavailable | None:
    """DuckDB's I/O failures as our errors (named file, what to do); None for the others."""
    if isinstance(error, duckdb.IOException | duckdb.FatalException | duckdb.OutOfMemoryException) \
            or "Corrupt database file" in str(error):
        return io_error(path, error)
    return None
