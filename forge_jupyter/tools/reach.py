"""What the model's file tools may open: one check every tool asks, one walk every listing takes.

``locate`` (paths.py) keeps a path inside the session's root. Inside it, some files are still
not the model's: the store's own (its database, write-ahead log, lock file and every other
``<db>.*`` sidecar, under any name — a symbolic link to them, a hard link), the folders of the
other sessions' saved outputs, and forge's private copies of a tenant's rows (the sql sandbox's
``forge-sql-*`` folders). Nor is anything that is not a regular file: a FIFO blocks whoever
opens it until a writer comes, ``/dev/zero`` never ends, a socket cannot be read at all.

``Fence`` says which of those a real path (or an inode) is; every file tool asks it — ``read``,
``write``, ``edit`` and ``apply_patch`` before they open, ``sql`` before a path may go into
DuckDB's ``allowed_paths`` — and ``walk`` and ``entries``, which ``list``, ``glob``, ``grep``
and ``sql``'s wildcards use, never yield what it refuses. Files are opened without following a
link and without blocking (O_NOFOLLOW | O_NONBLOCK), then checked on their descriptor (a
regular file, not the store's inode), so a FIFO put in place of a checked file is refused too.
"""

from __future__ import annotations

import contextlib
import functools
import os
import stat
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from ..errors import ToolError
from .base import ToolContext
from .nofollow import file_kind, open_dir, open_entry, open_inside
from .paths import SKIP_DIRS, Located, ignores_case

_STORE_FILES = ("the database", "the write-ahead log", "the lock file", "the pending copy",
                "the pending copy's log", "the pending copy's note")
_SIDECAR = "a working file"
# store/sandbox.py's PREFIX (a tenant's rows copied out for SQL), not imported from there: that
# module loads DuckDB, which no file tool needs (tests/tools/test_file_reach.py pins they agree)
COPIES = "forge-sql-"
OUTPUTS = "another session's saved outputs"


def _within(path: str, base: str) -> bool:
    return path == base or path.startswith(base.rstrip("/") + "/")


@dataclass(frozen=True)
class Fence:
    """The files inside the root that no file tool opens, whatever the path says."""

    fold: bool  # the file system ignores case: compare folded
    store: tuple[tuple[str, str], ...] = ()  # (real path, what it is) of the store's files
    sidecars: tuple[tuple[str, str], ...] = ()  # (folder, database name): ``name.*`` there
    inodes: tuple[tuple[int, int, str], ...] = ()  # (st_dev, st_ino, what) of those that exist
    outputs: str | None = None  # the folder holding every session's saved outputs
    own: str | None = None  # this session's, inside it: the one that stays readable
    copies: str = ""  # where the sql sandbox copies a tenant's rows: <tmp>/forge-sql-

    def _norm(self, path: str) -> str:
        return path.casefold() if self.fold else path

    def why(self, real: str) -> str | None:
        """What ``real`` (a resolved path) is when it is kept from the model, else None."""
        real = self._norm(real)
        for path, what in self.store:
            if real == self._norm(path):
                return f"{what} of this Forge's store"
        for folder, name in self.sidecars:
            folder, name = self._norm(folder), self._norm(name)
            if real.startswith(folder + "/"):
                first = real[len(folder) + 1:].split("/", 1)[0]
                if first == name or first.startswith(name + "."):
                    return f"{_SIDECAR} of this Forge's store"
        if self.outputs is not None:
            outputs = self._norm(self.outputs)
            if _within(real, outputs) and real != outputs and not (
                    self.own is not None and _within(real, self._norm(self.own))):
                return OUTPUTS
        if self.copies and real.startswith(self._norm(self.copies)):
            return "a private copy of a tenant's history"
        return None

    def why_inode(self, st: os.stat_result) -> str | None:
        """What the file behind ``st`` is when it is one of the store's (a hard link to it)."""
        for dev, ino, what in self.inodes:
            if st.st_ino == ino and st.st_dev == dev:
                return f"{what} of this Forge's store"
        return None

    def screens(self, ino: int) -> bool:
        """Whether an entry with inode number ``ino`` must be stat-ed to be judged."""
        return any(ino == i for _, i, _ in self.inodes)


def fence_of(ctx: ToolContext) -> Fence:
    """The fence of the running call: its Forge's store files and its session's outputs."""
    root = os.path.realpath(ctx.root) if ctx.root else None
    store = ctx.store
    owned = [str(f) for f in store.files()] if store is not None else []  # resolved already
    named = tuple(zip(owned, _STORE_FILES, strict=False))
    inodes = []
    for path, what in named:
        with contextlib.suppress(OSError):
            st = os.stat(path)
            inodes.append((st.st_dev, st.st_ino, what))
    sidecars = tuple((os.path.dirname(p), os.path.basename(p)) for p in owned[:1])
    own = ctx.output_dir
    own = os.path.realpath(own) if own else None
    outputs = os.path.dirname(own) if own else None
    if outputs is not None and root is not None and _within(root, outputs):
        outputs = None  # a root inside the outputs folder: every file of it would be "outputs"
    return Fence(ignores_case(root) if root else False, named, sidecars, tuple(inodes), outputs,
                 own, _copies(tempfile.gettempdir()))


@functools.lru_cache(maxsize=4)
def _copies(tmp: str) -> str:
    return os.path.join(os.path.realpath(tmp), COPIES)


def refusal(shown: str, what: str, *, writing: bool = False, tool: str = "") -> ToolError:
    """The error for a path that is ``what`` (a Fence's answer)."""
    if what == OUTPUTS:
        return ToolError(f"{shown} is in {what}: file tools open this session's own outputs "
                         "only. Work with the files of the session's root instead.")
    if writing:
        return ToolError(f"{shown} is {what}: writing it could corrupt every session's history, "
                         f"so {tool} refuses it. Save to another file name.")
    return ToolError(f"{shown} is {what}, which holds every session's history (other tenants' "
                     "too), so file tools never open it. Read this session's own history with "
                     "the history tool.")


def check(fence: Fence, located: Located, *, writing: bool = False, tool: str = "") -> None:
    """A ToolError when ``located`` is kept from the model (by its path, or its inode)."""
    what = fence.why(str(located.path))
    if what is None:
        with contextlib.suppress(OSError):
            what = fence.why_inode(os.stat(located.path))
    if what is not None:
        raise refusal(located.shown, what, writing=writing, tool=tool)


def approve(fence: Fence, located: Located) -> str:
    """``located``'s real path, once it is a regular file the model may read (else a ToolError):
    what may be handed to a reader that opens by path (DuckDB), without opening it here."""
    check(fence, located)
    try:
        st = os.stat(located.path, follow_symlinks=False)
    except OSError as exc:
        raise ToolError(f"{located.shown} cannot be read: {exc.strerror or exc}.") from exc
    if not stat.S_ISREG(st.st_mode):
        raise ToolError(f"{located.shown} is {file_kind(st)}; file tools read and write regular files only.")
    return str(located.path)


def open_readable(fence: Fence, located: Located) -> BinaryIO:
    """``located`` opened for reading: checked by path, reached without following links,
    opened without blocking, and checked again on the descriptor (a regular file, not the
    store's)."""
    what = fence.why(str(located.path))
    if what is not None:
        raise refusal(located.shown, what)
    f = open_inside(located)  # its inode is judged on the descriptor, below
    what = fence.why_inode(os.fstat(f.fileno()))
    if what is not None:
        f.close()
        raise refusal(located.shown, what)
    return f


# ------------------------------------------------------------------------------ walking


@dataclass(frozen=True, slots=True)
class Found:
    """A file a walk reached: a regular file the model may read, or a link inside the root to
    one (``target`` set)."""

    rel: str  # relative to the walk's start, POSIX
    shown: str  # relative to the root
    name: str
    dir_fd: int  # the folder holding it: valid while the walk is at this file
    target: Located | None = None  # a link's destination

    def open(self, fence: Fence) -> BinaryIO:
        """The file, opened as ``open_readable`` does (only while the walk is here)."""
        if self.target is not None:
            return open_readable(fence, self.target)
        f = open_entry(self.dir_fd, self.name, self.shown)  # nofollow, nonblocking, regular
        what = fence.why_inode(os.fstat(f.fileno()))
        if what is not None:  # swapped for a hard link to the store since the walk judged it
            f.close()
            raise refusal(self.shown, what)
        return f

    def mtime(self) -> float:
        try:
            if self.target is not None:
                return os.stat(self.target.path).st_mtime
            return os.stat(self.name, dir_fd=self.dir_fd, follow_symlinks=False).st_mtime
        except OSError:
            return 0.0


@dataclass(frozen=True, slots=True)
class Entry:
    """One entry of a folder as ``list`` shows it."""

    name: str
    is_dir: bool  # a directory, or a link to one
    link: str | None  # a link's text


def _judge(entry: os.DirEntry[str], folder: str, root: str, fence: Fence
           ) -> tuple[str, Located | None] | None:
    """("dir" | "file" | "link", a link's checked target) for an entry the model may see;
    None for what it may not (not regular, the store's, other sessions' outputs)."""
    real = f"{folder.rstrip('/')}/{entry.name}"
    try:
        if entry.is_symlink():
            dest = os.path.realpath(real)
            if not _within(dest, root) or fence.why(dest) is not None:
                return None
            st = os.stat(dest)
            if stat.S_ISDIR(st.st_mode):
                return "link-dir", None
            if not stat.S_ISREG(st.st_mode) or fence.why_inode(st) is not None:
                return None
            return "link", Located(root, dest[len(root.rstrip("/")) + 1:], root)
        if entry.is_dir(follow_symlinks=False):
            return ("dir", None) if fence.why(real) is None else None
        if not entry.is_file(follow_symlinks=False) or fence.why(real) is not None:
            return None
        if fence.screens(entry.inode()) and fence.why_inode(entry.stat(follow_symlinks=False)):
            return None
        return "file", None
    except OSError:  # gone, or a loop of links: nothing to read
        return None


def walk(start: Located, fence: Fence, *, skip: frozenset[str] = SKIP_DIRS,
         depth: int | None = None) -> Iterator[Found]:
    """Every file below the folder ``start`` the model may read, in name order (a folder's
    files, then its folders): never entering ``skip`` folders nor following links to folders,
    reached by descriptors from ``start`` (a folder swapped for a link ends that branch), at
    most ``depth`` folders down (None: all)."""
    fd = open_dir(start)
    try:
        yield from _walk(fd, str(start.path), "", start, fence, skip, depth)
    finally:
        os.close(fd)


def _walk(fd: int, folder: str, rel: str, start: Located, fence: Fence, skip: frozenset[str],
          depth: int | None) -> Iterator[Found]:
    with os.scandir(fd) as it:
        listed = sorted(it, key=lambda e: e.name)
    folders = []
    prefix = f"{start.rel}/" if start.rel != "." else ""
    for entry in listed:
        judged = _judge(entry, folder, start.root, fence)
        if judged is None:
            continue
        kind, target = judged
        if kind == "dir":
            if entry.name not in skip:
                folders.append(entry.name)
            continue
        if kind == "link-dir":
            continue  # links to folders are not followed
        here = f"{rel}{entry.name}"
        yield Found(here, f"{prefix}{here}", entry.name, fd, target)
    if depth is not None and depth <= 1:
        return
    for name in folders:
        try:
            sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                          dir_fd=fd)
        except OSError:  # gone, or swapped for a link since it was listed
            continue
        try:
            yield from _walk(sub, f"{folder.rstrip('/')}/{name}", f"{rel}{name}/", start, fence,
                             skip, None if depth is None else depth - 1)
        finally:
            os.close(sub)


def entries(folder: Located, fence: Fence) -> tuple[list[Entry], int]:
    """(what ``folder`` holds that the model may see, how many entries were left out)."""
    fd = open_dir(folder)
    shown: list[Entry] = []
    left_out = 0
    try:
        with os.scandir(fd) as it:
            for entry in it:
                judged = _judge(entry, str(folder.path), folder.root, fence)
                if judged is None:
                    if not _dangling_or_outside(entry, str(folder.path), folder.root, fence):
                        left_out += 1
                        continue
                    judged = ("link-out", None)
                kind = judged[0]
                link = os.readlink(entry.name, dir_fd=fd) if kind.startswith("link") else None
                is_dir = kind in ("dir", "link-dir") or (kind == "link-out" and entry.is_dir())
                shown.append(Entry(entry.name, is_dir, link))
    finally:
        os.close(fd)
    return shown, left_out


def _dangling_or_outside(entry: os.DirEntry[str], folder: str, root: str, fence: Fence) -> bool:
    """A link ``list`` still shows though it cannot be opened: one that leads out of the root
    (its text is the root's own) or to nothing — never one to a kept file or a FIFO."""
    if not entry.is_symlink():
        return False
    dest = os.path.realpath(f"{folder.rstrip('/')}/{entry.name}")
    if fence.why(dest) is not None:
        return False
    if not _within(dest, root):
        return True
    return not os.path.lexists(dest)

