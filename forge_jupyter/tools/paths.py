"""Where file tools may go (the session's root, never out of it) and how they write there."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from ..errors import ToolError
from .base import ToolContext

# Folders that searches (glob, grep) never descend into: tool caches and version control.
SKIP_DIRS = frozenset({".git", "node_modules", "__pycache__", ".ipynb_checkpoints"})


def session_root(ctx: ToolContext, tool: str) -> Path:
    """The session's root directory, or a ToolError saying the file tools have none."""
    if not ctx.root:
        raise ToolError(f"{tool} needs a root directory, and this session has none: file tools are "
                        "confined to the session's root. Start the session with a root directory.")
    root = Path(ctx.root).resolve()
    if not root.is_dir():
        raise ToolError(f"The session's root directory {root} does not exist.")
    return root


def _inside(path: Path, base: Path) -> bool:
    return path == base or base in path.parents


def resolve_inside(root: str | Path, path: str | Path, *, must_exist: bool = False,
                   allow: Iterable[str | Path | None] = ()) -> Path:
    """The real path ``path`` names, refused (ToolError) unless it lies inside ``root``.

    Relative paths resolve against ``root``. ``..`` escapes, absolute paths elsewhere and
    symbolic links out of the root are refused. ``allow`` names extra roots (the session's
    output folder, for ``read``) whose files are reachable too.
    """
    root = Path(root).resolve()
    bases = [root] + [Path(a).resolve() for a in allow if a]
    given = Path(path)
    candidate = given if given.is_absolute() else root / given
    lexical = Path(os.path.normpath(candidate))
    try:
        real = candidate.resolve()
    except (OSError, ValueError, RuntimeError) as exc:  # a NUL byte, a symlink loop
        raise ToolError(f"{str(path)!r} is not a usable path: {exc}.") from exc
    if not any(_inside(real, b) for b in bases):
        if any(_inside(lexical, b) for b in bases):
            raise ToolError(f"{str(path)!r} leads through a symbolic link to {real}, outside the root "
                            f"directory {root}. File tools do not follow links out of the root.")
        raise ToolError(f"{str(path)!r} resolves to {lexical}, outside the root directory {root}. "
                        "File tools only work inside the root: give a path relative to it.")
    if must_exist and not real.exists():
        raise ToolError(f"{str(path)!r} does not exist (looked for {real}). "
                        "Use list or glob to find the right path.")
    return real


def display_path(root: Path, path: Path) -> str:
    """``path`` as the model should write it: relative to the root, or absolute outside it."""
    try:
        rel = path.relative_to(root)
    except ValueError:
        return str(path)
    return rel.as_posix() or "."


def walk_files(base: Path, root: Path, *, skip: frozenset[str] = SKIP_DIRS) -> Iterator[Path]:
    """Every file below ``base`` in name order: never entering the ``skip`` folders, not
    following links to directories, and leaving out links to files outside ``root``."""
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if d not in skip)
        for name in sorted(filenames):
            file = Path(dirpath, name)
            if file.is_symlink() and not _inside(file.resolve(), root):
                continue
            yield file


# ------------------------------------------------------------------ reading and writing

BINARY_SAMPLE = 8192


def looks_binary(sample: bytes) -> bool:
    """A NUL byte, or mostly control bytes, in the first few KB: not text a model can read."""
    if b"\0" in sample:
        return True
    if not sample:
        return False
    control = sum(1 for b in sample if b < 32 and b not in (9, 10, 12, 13, 27, 8))
    return control / len(sample) > 0.3


def is_binary_file(path: Path) -> bool:
    with open(path, "rb") as f:
        return looks_binary(f.read(BINARY_SAMPLE))


class AtomicFile:
    """A file written under a temporary name next to ``path`` and renamed into place on
    ``commit()``: readers see the old file or the whole new one, never half of it."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._tmp = self.path.with_name(f".{self.path.name}.{secrets.token_hex(6)}.tmp")
        # 0o666 less the umask, as for any new file (mkstemp would make it private, 0o600)
        fd = os.open(self._tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        self.file: BinaryIO = os.fdopen(fd, "wb")

    def write(self, data: bytes) -> None:
        self.file.write(data)

    def commit(self) -> Path:
        self.file.close()
        if self.path.exists():
            try:
                os.chmod(self._tmp, self.path.stat().st_mode & 0o7777)
            except OSError:
                pass
        os.replace(self._tmp, self.path)
        return self.path

    def discard(self) -> None:
        self.file.close()
        try:
            os.unlink(self._tmp)
        except FileNotFoundError:
            pass

    def __enter__(self) -> AtomicFile:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.discard()


def write_text_atomic(path: Path, text: str) -> None:
    with AtomicFile(path) as f:
        f.write(text.encode("utf-8"))


def iter_lines(f: BinaryIO, cap: int) -> Iterator[tuple[bytes, int]]:
    """Each line of a binary file, without its newline, as (its first ``cap`` bytes, its length
    in bytes): a line of 100 MB costs ``cap`` bytes of memory, not 100 MB."""
    while True:
        line = f.readline(cap)
        if not line:
            return
        if line.endswith(b"\n"):
            yield line[:-1], len(line) - 1
            continue
        total = len(line)
        if total == cap:  # the line goes on: measure the rest without keeping it
            while rest := f.readline(1 << 16):
                if rest.endswith(b"\n"):
                    total += len(rest) - 1
                    break
                total += len(rest)
        yield line, total


def count_lines(path: Path) -> int:
    """Lines in a file (a last line without a newline counts), read 1 MB at a time."""
    n, last = 0, b"\n"
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            n += chunk.count(b"\n")
            last = chunk[-1:]
    return n + (0 if last == b"\n" else 1)
