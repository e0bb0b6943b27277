"""Where file tools may go (the session's root, never out of it) and how they write there."""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, BinaryIO

from ..errors import ToolError
from .base import ToolContext
from .permission import PathSubject

# Folders that searches (glob, grep) never descend into: tool caches and version control.
SKIP_DIRS = frozenset({".git", "node_modules", "__pycache__", ".ipynb_checkpoints"})


def root_dir(root: str | os.PathLike[str] | None, tool: str) -> Path:
    """The session's root directory, resolved, or a ToolError saying the file tools have none."""
    return Path(_real_root(root, tool))


def _real_root(root: str | os.PathLike[str] | None, tool: str) -> str:
    if not root:
        raise ToolError(f"{tool} needs a root directory, and this session has none: file tools are "
                        "confined to the session's root. Start the session with a root directory.")
    found = os.path.realpath(root)
    if not os.path.isdir(found):
        raise ToolError(f"The session's root directory {found} does not exist.")
    return found


def session_root(ctx: ToolContext, tool: str) -> Path:
    """The running session's root directory (see ``root_dir``)."""
    return root_dir(ctx.root, tool)


# Linux's limits (PATH_MAX, NAME_MAX): a longer path cannot name a file, so it is refused
# before it is matched, not left to fail later with a less clear error.
MAX_PATH_BYTES = 4095
MAX_NAME_BYTES = 255


@dataclass(frozen=True)
class Located:
    """A path as file tools see it: a base directory (the root, or an extra one such as the
    output folder) and the path relative to it, POSIX, with ``.``, ``..``, repeated slashes and
    the symbolic links of its existing part resolved: the one spelling permission rules match."""

    base: str  # resolved
    rel: str  # "." for the base itself
    root: str  # resolved

    @property
    def path(self) -> Path:
        return Path(self.base if self.rel == "." else os.path.join(self.base, self.rel))

    @property
    def shown(self) -> str:
        """How the model should write it: relative to the root, or absolute outside it."""
        return self.rel if self.base == self.root else str(self.path)


def _check_spelling(path: object) -> str:
    if not isinstance(path, str):
        raise ToolError(f"A path must be a string, not {type(path).__name__}.")
    if "\0" in path:
        raise ToolError(f"{path!r} contains a NUL byte, which no file name can hold: give the "
                        "path without it.")
    try:  # strict UTF-8: a lone surrogate (an undecodable byte, say) is no name to write or match
        raw = path.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ToolError(f"{path!r} is not a usable file name ({exc.reason}): file tools take "
                        "UTF-8 names.") from exc
    if len(raw) > MAX_PATH_BYTES or any(len(name) > MAX_NAME_BYTES for name in raw.split(b"/")):
        raise ToolError(f"{path[:80]!r}… is too long to be a path ({len(raw):,} bytes; at most "
                        f"{MAX_PATH_BYTES:,}, and {MAX_NAME_BYTES} for one name): give a shorter one.")
    return path


def locate(root: str | Path, path: str, *, must_exist: bool = False, for_writing: bool = False,
           allow: Iterable[str | Path | None] = ()) -> Located:
    """Where ``path`` leads, refused (ToolError) unless it lies inside ``root``.

    Relative paths resolve against ``root``. ``..`` escapes, absolute paths elsewhere and
    symbolic links out of the root are refused, and so is what cannot be a path (a NUL byte,
    over-long). ``allow`` names extra bases (the session's output folder, for ``read``) whose
    files are reachable too. ``for_writing`` refuses a path ending in ``/`` (a folder's name).
    """
    return _locate(os.path.realpath(root), path, must_exist, for_writing, allow)


def _within(path: str, base: str) -> bool:
    return path == base or path.startswith(base.rstrip("/") + "/")


def _locate(root: str, path: str, must_exist: bool, for_writing: bool,
            allow: Iterable[str | Path | None]) -> Located:
    # strings and os.path, not pathlib: this runs in every file tool's permission gate
    _check_spelling(path)
    if for_writing and path.endswith("/"):
        raise ToolError(f"{path!r} ends with '/', so it names a directory; give the path of a file.")
    bases = [root, *(os.path.realpath(a) for a in allow if a)]
    candidate = os.path.join(root, path)  # an absolute path replaces the root
    real = os.path.realpath(candidate)  # a link loop stays unresolved: the walk refuses it later
    base = next((b for b in bases if _within(real, b)), None)
    if base is None:
        lexical = os.path.normpath(candidate)
        if any(_within(lexical, b) for b in bases):
            # the link's destination is not named: it may tell what lies outside the root
            raise ToolError(f"{path!r} leads through a symbolic link to a place outside the root "
                            f"directory {root}. File tools do not follow links out of the root.")
        raise ToolError(f"{path!r} resolves to {lexical}, outside the root directory {root}. "
                        "File tools only work inside the root: give a path relative to it.")
    if must_exist and not os.path.lexists(real):
        raise ToolError(f"{path!r} does not exist (looked for {real}). "
                        "Use list or glob to find the right path.")
    rel = "." if real == base else real[len(base.rstrip("/")) + 1:]
    return Located(base, rel, root)


def resolve_inside(root: str | Path, path: str | Path, *, must_exist: bool = False,
                   allow: Iterable[str | Path | None] = ()) -> Path:
    """The real path ``path`` names inside ``root`` (see ``locate``)."""
    return locate(root, str(path), must_exist=must_exist, allow=allow).path


@lru_cache(maxsize=64)
def ignores_case(root: str) -> bool:
    """Whether the file system at ``root`` ignores case (macOS, Windows): then ``Locked/a`` is
    ``locked/a``, and rules match without case. Judged once per root, at the root."""
    path = Path(root)
    for folder in (path, *path.parents):
        if folder.name.swapcase() != folder.name:
            other = folder.with_name(folder.name.swapcase()) / path.relative_to(folder)
            try:
                return os.path.samefile(other, path)
            except OSError:
                return False
    return False


def path_subject(arg: str = "path", *, default: str = ".", for_writing: bool = False,
                 outputs: bool = False) -> Callable[..., PathSubject]:
    """A file tool's permission subject: ``args[arg]`` normalized by ``locate`` (a ToolError,
    which the gate reports as a refusal, when it cannot be)."""

    def subject(args: dict[str, Any], root: str | None, output_dir: str | None = None) -> PathSubject:
        base = _real_root(root, "This file tool")
        found = _locate(base, args.get(arg, default), False, for_writing,
                        (output_dir,) if outputs else ())
        return PathSubject(found.shown, base, ignores_case(base))

    return subject


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


def count_lines(source: Path | BinaryIO) -> int:
    """Lines in a file (a last line without a newline counts), read 1 MB at a time."""
    n, last = 0, b"\n"
    with open(source, "rb") if isinstance(source, Path) else contextlib.nullcontext(source) as f:
        while chunk := f.read(1 << 20):
            n += chunk.count(b"\n")
            last = chunk[-1:]
    return n + (0 if last == b"\n" else 1)
