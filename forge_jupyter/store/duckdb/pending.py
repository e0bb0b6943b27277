"""Writes that wait beside the file while a program outside forge-jupyter holds it.

DuckDB lets a file be open read-write by one process, or read-only by several — never both.
So a DuckDB CLI session, DBeaver or a ``duckdb.connect()`` in a cell that keeps the store open
would make every write of the agent wait for it (DESIGN §3, "Several kernels, one file"). It
does not: when the file stays held, forge-jupyter copies it to ``<file>.pending`` once and
works on that copy — every read and write of every forge process, which all see the copy under
the same queue lock — until the file is free again; then the copy takes the file's place in
one rename. Nothing is lost (the copy is a DuckDB file on disk: a killed kernel leaves it, and
the next process to open the store lands it), nothing is written twice (the copy holds the
store's whole state, so landing it is a swap, not a replay), and order is kept.

``<file>.pending.json`` says what the file was when it was copied (size, change time, inode).
A file changed meanwhile — the other program wrote to it — is not thrown away: it is kept as
``<file>.changed-<time>`` and the landing says so. Everything here runs under the queue lock
(``file.DuckDBFile``), so no two forge processes make or land a copy at once.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import shutil
import stat
import time
import warnings
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

import duckdb

log = logging.getLogger(__name__)
DUCKDB_CONFIG = {
    # never reach for the network: a file that looks like another format must fail, not
    # make DuckDB download a scanner extension for it
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
}


class StoreDiverted(UserWarning):
    """The file is held by another program, and writes wait beside it (said once a process)."""


_said: dict[object, object] = {}


def say(message: str) -> None:
    """A notice for the person, attributed to forge-jupyter rather than to the store's inner
    line that noticed; each message once a process."""
    warnings.warn_explicit(message, StoreDiverted, "forge-jupyter", 0, registry=_said)


def _wal(path: Path) -> Path:
    return path.with_name(path.name + ".wal")


def signature(path: Path) -> list[int]:
    """What says the file (and its write-ahead log) is unchanged: sizes, change times, inode."""
    out: list[int] = []
    for p in (path, _wal(path)):
        try:
            st = os.stat(p)
        except FileNotFoundError:
            out += [-1, -1, -1]
        else:
            out += [st.st_size, st.st_mtime_ns, st.st_ino]
    return out


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _new_file(path: Path) -> int:
    """A descriptor of a file made anew at ``path``: whatever stood there is removed first and
    a link planted there is never followed (the folder may be a cloned project's ``.forge/``,
    where ``forge.duckdb.pending.tmp -> ~/.bashrc`` would otherwise be written through)."""
    with suppress(FileNotFoundError):
        os.unlink(path)
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)


def _copy(source: Path, target: Path) -> None:
    with open(source, "rb") as src, os.fdopen(_new_file(target), "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
        dst.flush()
        os.fsync(dst.fileno())


def _read_small(path: Path, limit: int = 4096) -> str:
    """A short note's text, read without following a link or waiting on a pipe."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a plain file")
        return os.read(fd, limit).decode("utf-8", "replace")
    finally:
        os.close(fd)


def _write(path: Path, text: str) -> None:
    with os.fdopen(_new_file(path), "w") as f:
        f.write(text)


def copy_whole(source: Path, out: Path) -> None:
    """``source`` copied to ``out`` as one file, by way of a temporary name, so ``out`` is
    always a whole copy (or the one it replaces); a write-ahead log is folded into it first."""
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    try:
        _copy(source, tmp)
        if _wal(source).exists():
            _copy(_wal(source), _wal(tmp))
            # attaching replays the log; the checkpoint folds it into the file
            con = duckdb.connect(str(tmp), config=DUCKDB_CONFIG)
            con.execute("CHECKPOINT")
            con.close()
        with suppress(FileNotFoundError):
            _wal(out).unlink()  # an older file's log must never be replayed into this one
        os.replace(tmp, out)
    except BaseException:
        for p in (tmp, _wal(tmp)):
            with suppress(OSError):
                p.unlink()
        raise


def _own_regular_file(path: Path) -> bool:
    """A plain file of this user's, not a link: what a pending copy forge made looks like."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_uid == os.getuid()


@dataclass(frozen=True, slots=True)
class Landed:
    """What landing a pending copy did: where the file's own changes went, if it had any."""

    kept_changes: Path | None = None


class Pending:
    """The pending copy of one store file (see the module docstring)."""

    def __init__(self, main: Path) -> None:
        self.main = main
        self.path = main.with_name(main.name + ".pending")
        self.base_path = main.with_name(main.name + ".pending.json")

    def exists(self) -> bool:
        return os.path.lexists(self.path)

    def files(self) -> tuple[Path, ...]:
        return (self.path, _wal(self.path), self.base_path)

    # -- is the file free? --------------------------------------------------------------------

    def hold_free(self) -> int | None:
        """A descriptor holding a write lock on the file if no other program holds it (DuckDB
        locks the whole file with ``fcntl``: a read lock for a read-only connection, a write
        lock otherwise), else None. The caller closes it, which lets the lock go."""
        try:
            fd = os.open(self.main, os.O_RDWR | os.O_NOFOLLOW)
        except FileNotFoundError:
            return -1  # no file at all: nothing holds it
        except OSError:
            return None
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return None
        return fd

    # -- make -------------------------------------------------------------------------------

    def make(self) -> None:
        """Copy the held file (and its log, if any) to the pending copy; raises OSError when
        that cannot be done (a read-only folder, a full disk) and leaves no half copy."""
        tmp = self.path.with_name(self.path.name + ".tmp")
        base = signature(self.main)
        try:
            _copy(self.main, tmp)
            if _wal(self.main).exists():
                _copy(_wal(self.main), _wal(tmp))
            if signature(self.main) != base:  # written while being copied: not a whole copy
                raise OSError(f"{self.main} changed while it was being copied")
            _write(self.base_path, json.dumps({"base": base, "made": time.time(),
                                               "pid": os.getpid()}))
            if _wal(tmp).exists():
                os.replace(_wal(tmp), _wal(self.path))
            else:  # a log left there (or planted) must not be replayed into the copy
                with suppress(FileNotFoundError):
                    os.unlink(_wal(self.path))
            os.replace(tmp, self.path)  # the copy exists only once it is whole
            _fsync_dir(self.path.parent)
        except BaseException:
            for p in (tmp, _wal(tmp)):
                with suppress(OSError):
                    p.unlink()
            raise

    # -- land -------------------------------------------------------------------------------

    def usable(self) -> bool:
        return _own_regular_file(self.path)

    def land(self) -> Landed:
        """The copy takes the file's place. Call with the file free (``hold_free``) and the
        copy detached and checkpointed; a file changed since the copy is kept beside it."""
        kept: Path | None = None
        if self._base() != signature(self.main) and self.main.exists():
            stamp = time.strftime("%Y%m%d-%H%M%S")
            kept = self.main.with_name(f"{self.main.name}.changed-{stamp}")
            if _wal(self.main).exists():
                os.replace(_wal(self.main), _wal(kept))
            os.replace(self.main, kept)
            log.warning("%s was changed by another program while forge-jupyter's writes "
                        "waited beside it; that version is kept as %s", self.main, kept)
        elif _wal(self.main).exists():
            _wal(self.main).unlink()  # of the file as copied: the copy holds what it says
        if _wal(self.path).exists():
            os.replace(_wal(self.path), _wal(self.main))
        os.replace(self.path, self.main)
        with suppress(OSError):
            self.base_path.unlink()
        _fsync_dir(self.main.parent)
        return Landed(kept)

    def set_aside(self, why: str) -> Path:
        """A copy that cannot be landed (damaged, not ours) is moved away, never deleted."""
        stamp = time.strftime("%Y%m%d-%H%M%S")
        aside = self.main.with_name(f"{self.main.name}.pending-unusable-{stamp}")
        os.replace(self.path, aside)
        if os.path.lexists(_wal(self.path)):
            os.replace(_wal(self.path), _wal(aside))
        with suppress(OSError):
            self.base_path.unlink()
        log.warning("%s could not be landed (%s); it was moved to %s", self.path, why, aside)
        return aside

    def _base(self) -> list[int] | None:
        try:
            data = json.loads(_read_small(self.base_path))
        except (OSError, ValueError):
            return None
        base = data.get("base") if isinstance(data, dict) else None
        if isinstance(base, list) and len(base) == 6 and all(type(v) is int for v in base):
            return base
        return None

