"""Images kept by content: ``<a session's outputs>/images/<sha256>.<ext>``, each stored once.

A ``file`` part names its image by the hash of its bytes (``FilePart.sha256``), never by a
path, and rows never hold the bytes. Two identical charts are one file. The name comes back
from the store or from an imported file, so it is untrusted: ``image_path`` is the one way
from a part to a file, and it only ever names a file directly in that folder — a hash of 64
lowercase hex digits and an extension from ``EXTENSIONS``, nothing else (``../x``, ``/etc``,
``C:\\x``, upper case, a shorter or longer name are refused). ``load`` then opens it without
following a symlink (the file or the folder), and returns its bytes only if they hash to its
name: an image is what its name says or nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
from pathlib import Path

FOLDER = "images"
EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg"}
MAX_BYTES = 20_000_000  # no kept image is larger (llm/images.py sends far less)
_HASH = re.compile(r"[0-9a-f]{64}")


class BadImageName(ValueError):
    """A hash or type that names no image here (``image_path``)."""


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def image_path(outputs: str | os.PathLike[str], sha256: str, mime: str) -> Path:
    """The file of image ``sha256`` (of type ``mime``) in the session folder ``outputs``;
    ``BadImageName`` for anything that is not exactly a hash and a known type."""
    if not isinstance(sha256, str) or _HASH.fullmatch(sha256) is None:
        raise BadImageName(f"{str(sha256)[:80]!r} is not an image hash (64 hex digits)")
    ext = EXTENSIONS.get(mime)
    if ext is None:
        raise BadImageName(f"{str(mime)[:80]!r} is not a kept image type")
    return Path(outputs) / FOLDER / f"{sha256}.{ext}"


def save(outputs: str | os.PathLike[str], data: bytes, mime: str) -> str:
    """Keep ``data`` under its hash in ``outputs`` (once: a file already there is kept)."""
    sha = digest(data)
    path = image_path(outputs, sha, mime)
    if load(outputs, sha, mime) is None:  # missing, or damaged: written (again)
        folder = path.parent
        if folder.is_symlink():
            raise BadImageName(f"{folder} is a symbolic link; images are not kept through one")
        with contextlib.suppress(FileNotFoundError):
            if path.is_symlink():
                path.unlink()
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=folder)  # whole or not at all
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise
    return sha


def load(outputs: str | os.PathLike[str], sha256: str, mime: str) -> bytes | None:
    """The bytes of image ``sha256`` kept in ``outputs``; None when it is not there (or not
    what its name says). ``BadImageName`` for a name that could point anywhere else."""
    path = image_path(outputs, sha256, mime)
    if path.parent.is_symlink():
        return None
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:  # missing, or a symlink (ELOOP)
        return None
    with os.fdopen(fd, "rb") as f:
        data = f.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES or digest(data) != sha256:
        return None
    return data
