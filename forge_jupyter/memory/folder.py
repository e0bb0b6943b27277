"""The memory folder: MEMORY.md, the daily logs, every ``.md`` file under it — read as
untrusted input.

Anyone who can write to the folder writes what the index and the model read, so: only
regular ``.md`` files inside the folder are read (a symbolic link is skipped, whether it leads
inside or out; a name that is not valid UTF-8 is skipped), each is reached without following
links (tools/nofollow.py), read up to ``MAX_FILE_BYTES``, and decoded to valid Unicode (an
invalid byte becomes U+FFFD). A folder may hold at most ``MAX_FILES`` indexed files. The
project's own ``.forge/memory`` is a project file (project_files.py): if it, or ``.forge``, is a
link, it is refused rather than followed.
"""

from __future__ import annotations

import datetime as dt
import errno
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import ToolError
from ..project_files import checked, project_root
from ..scrub import valid_text
from ..tools.nofollow import open_inside
from ..tools.paths import SKIP_DIRS, locate, looks_binary

DEFAULT_DIR = Path(".forge") / "memory"
MAX_FILE_BYTES = 1 << 20  # read (and indexed) of one file; a daily log rolls over past it
MAX_FILES = 2_000
LOG_NAME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:-\d+)?\.md$")

TEMPLATE = """\
# MEMORY.md — curated facts

Facts worth keeping across sessions: conventions, decisions, where things are, what was
learned. Edit this file freely. forge searches every `.md` file of this folder
(`memory_search`, `%forge memory search …`); when a session is compacted, what the summary
replaced — tool results and decisions — is appended to the day's log (`YYYY-MM-DD.md`).

## Facts

"""


@dataclass(frozen=True, slots=True)
class FileInfo:
    path: str  # relative to the folder, POSIX
    size: int
    mtime_ns: int


def log_date(path: str) -> dt.date | None:
    """The date a daily log's name carries (``2026-11-30.md``, ``2026-11-30-2.md``), else None:
    other files (MEMORY.md, notes) are evergreen and never decay."""
    found = LOG_NAME.fullmatch(path.rsplit("/", 1)[-1])
    if found is None:
        return None
    try:
        return dt.date(*(int(g) for g in found.groups()))
    except ValueError:
        return None


class MemoryFolder:
    """One memory folder, resolved once; nothing is created before it is first used.

    ``project``: the folder is that project's ``.forge/memory``, a project file
    (project_files.py): it is used only while it is a real folder of the project — a link
    there (to another folder, whether inside the project or out) is refused at every use."""

    def __init__(self, path: str | os.PathLike[str], project: str | os.PathLike[str] | None = None
                 ) -> None:
        self.project = project_root(project) if project is not None else None
        if self.project is not None:  # never resolved through a link: checked at each use
            self.path = self.project / DEFAULT_DIR
        else:
            self.path = Path(os.path.realpath(Path(path).expanduser()))

    def _check_project(self) -> None:
        if self.project is not None:
            checked(self.project, DEFAULT_DIR.as_posix(), "dir")

    def __repr__(self) -> str:
        return f"MemoryFolder({str(self.path)!r})"

    def ensure(self) -> Path:
        """The folder, created with a MEMORY.md from the template if it has none."""
        self._check_project()  # before mkdir: a link at .forge would be followed by it
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ToolError(f"The memory folder {self.path} cannot be created ({exc.strerror}); "
                            "set another one with Forge.memory_dir.") from exc
        if not self.path.is_dir():
            raise ToolError(f"The memory folder {self.path} is not a directory; set another one "
                            "with Forge.memory_dir.")
        self._check_project()
        try:
            fd = os.open(self.path / "MEMORY.md",
                         os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
        except FileExistsError:
            return self.path
        with os.fdopen(fd, "wb") as f:
            f.write(TEMPLATE.encode("utf-8"))
        return self.path

    # -- reading ------------------------------------------------------------------------

    def files(self) -> tuple[list[FileInfo], list[tuple[str, str]]]:
        """The ``.md`` files to index, in name order, and (path, why) of those left out."""
        found: list[FileInfo] = []
        skipped: list[tuple[str, str]] = []
        self._check_project()
        if not self.path.is_dir():
            return found, skipped
        for rel, info in self._walk():
            if isinstance(info, str):
                skipped.append((rel, info))
            elif len(found) >= MAX_FILES:
                skipped.append((rel, f"over {MAX_FILES:,} files in the memory folder"))
            else:
                found.append(FileInfo(rel, info.st_size, info.st_mtime_ns))
        return found, skipped

    def _walk(self) -> Iterator[tuple[str, os.stat_result | str]]:
        base = str(self.path)
        for dirpath, dirnames, filenames in os.walk(base):  # never follows links to folders
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
            for name in sorted(filenames):
                if not name.lower().endswith(".md") or name.startswith("."):
                    continue
                full = os.path.join(dirpath, name)
                rel = os.path.relpath(full, base).replace(os.sep, "/")
                try:
                    rel.encode("utf-8")
                except UnicodeEncodeError:
                    yield valid_text(rel), "its name is not valid UTF-8"
                    continue
                info = os.lstat(full)
                if stat.S_ISLNK(info.st_mode):
                    yield rel, "a symbolic link (memory files are read only as regular files)"
                elif stat.S_ISREG(info.st_mode):
                    yield rel, info

    def read(self, rel: str) -> tuple[bytes, bool]:
        """(up to ``MAX_FILE_BYTES`` of the file, whether it was longer); ToolError when the
        path leaves the folder, is a link, or is not a text file."""
        self._check_project()
        located = locate(self.path, rel, must_exist=True)
        if located.path.is_dir():
            raise ToolError(f"{located.shown} is a folder of the memory folder, not a file.")
        with open_inside(located) as f:
            data = f.read(MAX_FILE_BYTES + 1)
        if looks_binary(data[:8192]):
            raise ToolError(f"{located.shown} is not a text file; memory files are Markdown.")
        return data[:MAX_FILE_BYTES], len(data) > MAX_FILE_BYTES

    def text(self, rel: str) -> tuple[str, bool]:
        data, cut = self.read(rel)
        if cut:  # never end inside a UTF-8 sequence or a line
            data = data[: data.rfind(b"\n") + 1] or data
        return valid_text(data.decode("utf-8", "replace")), cut

    # -- the daily log ------------------------------------------------------------------

    def append_log(self, entry: str, day: dt.date) -> str:
        """Append ``entry`` to the day's log (created with a title; a log past
        ``MAX_FILE_BYTES`` continues in ``YYYY-MM-DD-2.md``…); returns the file's name."""
        self.ensure()
        data = valid_text(entry).encode("utf-8")
        fd = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            for n in range(1, 1000):
                name = f"{day.isoformat()}{'' if n == 1 else f'-{n}'}.md"
                try:
                    out = os.open(name, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW
                                  | os.O_CLOEXEC, 0o666, dir_fd=fd)
                except OSError as exc:
                    if exc.errno == errno.ELOOP:
                        raise ToolError(f"{self.path / name} is a symbolic link; the memory log is "
                                        "not written through links. Remove it.") from exc
                    raise
                try:
                    size = os.fstat(out).st_size
                    if size + len(data) > MAX_FILE_BYTES and size > 0:
                        continue
                    title = f"# Memory log {day.isoformat()}\n\n".encode() if size == 0 else b""
                    _write_all(out, title + data)
                    return name
                finally:
                    os.close(out)
        finally:
            os.close(fd)
        raise ToolError(f"The memory logs of {day.isoformat()} are full.")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
