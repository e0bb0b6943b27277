"""A project's own files — ``.forge/mcp.json``, ``.forge/memory``, ``.forge/skills``,
``.forge/commands`` in the notebook's folder — opened safely.

A project folder may have been cloned, unpacked or shared: anyone may have put anything in it,
links included. A ``.forge/mcp.json`` that is a link to another project's trusted file would
borrow that file's trust; a ``.forge/memory`` that is a link would have the index read another
folder. So a project file is named relative to its project's folder, and reached by walking
from that folder one name at a time: a name that is empty, ``.``, ``..`` or holds a ``/``, ``\\``
or NUL, a symbolic link anywhere on the way (the project file itself included, whether it
leads inside the folder or out), and anything that is not a regular file (or folder) is
refused, with the reason and what to do. Files are then opened relative to their folder's
descriptor without following links (tools/nofollow.py), so a link put in place after the check
is refused too. The project's folder itself is taken as the person gave it (resolved).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Literal

from .errors import ToolError
from .tools.nofollow import open_inside
from .tools.paths import Located


class ProjectFileRefused(ToolError):
    """A project file that is a link, leads outside its folder or is no regular file."""


def project_root(root: str | os.PathLike[str]) -> Path:
    """The project's folder, resolved: what every project path is relative to."""
    return Path(os.path.realpath(os.fspath(root)))


def _names(rel: str) -> list[str]:
    names = rel.split("/")
    for name in names:
        if name in ("", ".", "..") or "\\" in name or "\0" in name:
            raise ProjectFileRefused(
                f"{rel[:200]!r} is not a path inside the project folder (no '..', '.', empty "
                "names, backslashes or absolute paths); name the file relative to it.")
    return names


def checked(root: str | os.PathLike[str], rel: str,
            kind: Literal["file", "dir"] = "file") -> Path | None:
    """``<root>/<rel>`` if it is a real ``kind`` (file or folder) with no link on the way,
    None when it (or a folder on the way) does not exist; ``ProjectFileRefused`` otherwise."""
    base = project_root(root)
    names = _names(rel)
    path = base
    for i, name in enumerate(names):
        path = path / name
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            return None
        shown = "/".join(names[:i + 1])
        last = i == len(names) - 1
        if stat.S_ISLNK(info.st_mode):
            raise ProjectFileRefused(
                f"{base / shown} is a symbolic link (to {os.readlink(path)}): project files are "
                "read only as real files inside the project folder, never through a link. "
                "Replace the link by a copy of what it points to.")
        want_dir = not last or kind == "dir"
        if want_dir and not stat.S_ISDIR(info.st_mode):
            raise ProjectFileRefused(f"{base / shown} is not a folder; project files are "
                                     f"read from .forge/ folders inside {base}.")
        if not want_dir and not stat.S_ISREG(info.st_mode):
            raise ProjectFileRefused(f"{base / shown} is not a regular file (a folder, a FIFO, "
                                     "a device); project files are regular files.")
    return path


def read_project_file(root: str | os.PathLike[str], rel: str, max_bytes: int) -> bytes | None:
    """Up to ``max_bytes`` of the project file ``<root>/<rel>`` (``checked``), None when it
    does not exist; opened without following links, so a link swapped in meanwhile fails."""
    if checked(root, rel, "file") is None:
        return None
    base = str(project_root(root))
    try:
        with open_inside(Located(base=base, rel=rel, root=base)) as f:
            return f.read(max_bytes)
    except FileNotFoundError:
        return None
    except ToolError as exc:  # replaced by a link or a folder between the check and the open
        raise ProjectFileRefused(f"{base}/{rel}: {exc}") from None
