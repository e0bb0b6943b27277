"""Reaching a checked path without following links: the folder is opened by walking from the
base, the file opened, created and renamed relative to that folder's descriptor."""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator
from typing import BinaryIO

from ..errors import ToolError
from .paths import Located

# A Located path was checked, then used: between the two, a folder on the way may be swapped
# for a symbolic link to anywhere. So a file is never reached by its path string. Its folder
# is opened by walking from the base one name at a time with O_NOFOLLOW | O_DIRECTORY (a link
# put in a folder's place fails the walk instead of being followed), and the file itself is
# opened, created and renamed relative to that folder's descriptor, again without following.

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_SWAPPED = ("was not reached: {what} is a symbolic link where a directory or file was checked (one put "
            "in its place while in use, or a loop of links). Nothing was read or written there; "
            "check the path with list and try again.")


@contextlib.contextmanager
def parent_dir(located: Located, *, create: bool = False) -> Iterator[tuple[int, str]]:
    """(a descriptor of the folder holding ``located``, its name there), reached from the base
    without following links; FileNotFoundError if a folder is missing and not ``create``."""
    if located.rel == ".":
        raise ToolError(f"{located.shown} is a directory (the root itself); give the path of a file.")
    *folders, name = located.rel.split("/")
    fd = os.open(located.base, _DIR_FLAGS & ~os.O_NOFOLLOW)
    try:
        for i, folder in enumerate(folders):
            try:
                step = _open_folder(fd, folder, create)
            except OSError as exc:
                where = "/".join(folders[:i + 1])
                # Linux answers ENOTDIR, not ELOOP, for a link opened with O_DIRECTORY|O_NOFOLLOW
                if exc.errno == errno.ELOOP or _is_link(fd, folder):
                    raise ToolError(f"{located.shown} {_SWAPPED.format(what=where)}") from exc
                if exc.errno == errno.ENOTDIR:
                    raise ToolError(f"{where} is a file, not a directory, so {located.shown} cannot "
                                    "be inside it.") from exc
                raise
            os.close(fd)
            fd = step
        yield fd, name
    finally:
        os.close(fd)


def open_dir(located: Located) -> int:
    """A descriptor of the folder ``located`` itself, reached from the base without following
    links; a ToolError when it is not a folder."""
    if located.rel == ".":
        return os.open(located.base, _DIR_FLAGS & ~os.O_NOFOLLOW)
    with parent_dir(located) as (fd, name):
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP or _is_link(fd, name):
                raise ToolError(f"{located.shown} {_SWAPPED.format(what=located.shown)}") from exc
            if exc.errno == errno.ENOTDIR:
                raise ToolError(f"{located.shown} is a file, not a directory.") from exc
            raise


def _is_link(fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _open_folder(fd: int, name: str, create: bool) -> int:
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=fd)
    except FileNotFoundError:
        if not create:
            raise
    with contextlib.suppress(FileExistsError):
        os.mkdir(name, 0o777, dir_fd=fd)
    return os.open(name, _DIR_FLAGS, dir_fd=fd)


def entry_stat(fd: int, name: str) -> os.stat_result | None:
    """The entry ``name`` in folder ``fd`` itself (a link is not followed), or None if absent."""
    try:
        return os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def open_entry(fd: int, name: str, shown: str) -> BinaryIO:
    """The regular file ``name`` in folder ``fd``, opened for reading without following a link
    (and without blocking on a FIFO); anything else is a ToolError."""
    # judged before it is opened: opening a device or a socket is itself an act (ENXIO, a
    # tape rewound), and after, on the descriptor, in case it was swapped meanwhile
    before = entry_stat(fd, name)
    if before is not None and not stat.S_ISREG(before.st_mode) and not stat.S_ISLNK(before.st_mode):
        raise ToolError(f"{shown} is {file_kind(before)}; file tools read and write regular files only.")
    try:
        file_fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ToolError(f"{shown} {_SWAPPED.format(what=shown)}") from exc
        raise
    st = os.fstat(file_fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(file_fd)
        raise ToolError(f"{shown} is {file_kind(st)}; file tools read and write regular files only.")
    os.set_blocking(file_fd, True)
    return os.fdopen(file_fd, "rb")


def file_kind(st: os.stat_result) -> str:
    """What a file that is not a regular one is, in words."""
    mode = st.st_mode
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe), which would wait for a writer"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def open_inside(located: Located) -> BinaryIO:
    """``located`` opened for reading, reached from its base without following links."""
    with parent_dir(located) as (fd, name):
        return open_entry(fd, name, located.shown)


def replace_entry(fd: int, name: str, data: bytes, *, mode: int | None = None) -> None:
    """Write ``data`` under a temporary name in folder ``fd`` and rename it to ``name``: readers
    see the old file or the whole new one; a link at ``name`` is replaced, never followed."""
    tmp = f".{name[:200]}.{secrets.token_hex(6)}.tmp"
    # 0o666 less the umask, as for any new file (mkstemp would make it private, 0o600)
    file_fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                      0o666, dir_fd=fd)
    try:
        with os.fdopen(file_fd, "wb") as f:
            if mode is not None:
                with contextlib.suppress(OSError):
                    os.fchmod(f.fileno(), mode & 0o7777)
            f.write(data)
        os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=fd)
        raise
