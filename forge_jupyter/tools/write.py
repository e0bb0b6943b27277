"""The `write` tool: create or overwrite a file with the given text."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator

from ..errors import ToolError
from ..message import PatchFile
from .base import Tool, ToolContext, ToolResult, tool_from_function
from .checkpoint import file_changed
from .nofollow import entry_stat, open_entry, parent_dir, replace_entry
from .patch import unified_diff
from .paths import Located, locate, path_subject, session_root
from .reach import check, fence_of
from .registry import wants_apply_patch

DESCRIPTION = """Create a file under the session's root, or replace all of an existing one, with \
`content` exactly as given (UTF-8; missing directories are created). To change part of a file \
prefer edit. Reports the lines added and removed."""

def read_text(data: bytes, shown_path: str) -> str:
    """A file's text exactly as stored (line endings kept), refused when it is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError(f"{shown_path} is not UTF-8 text ({exc.reason} at byte {exc.start}); "
                        "only text files can be edited this way. Use python for other files.") from exc


class Target:
    """The file a write or edit changes, held by its folder's descriptor from the check to the
    rename (paths.parent_dir): a link swapped in meanwhile cannot send the bytes elsewhere.
    Each change is checkpointed (checkpoint.py) for the call ``ctx`` names, when there is one."""

    def __init__(self, fd: int | None, name: str, located: Located,
                 ctx: ToolContext | None = None, tool: str = "") -> None:
        self.fd, self.name, self.shown, self.located = fd, name, located.shown, located
        self.ctx, self.tool = ctx, tool
        self.stat = entry_stat(fd, name) if fd is not None else None  # None: a folder is missing
        if self.stat is not None and stat.S_ISDIR(self.stat.st_mode):
            raise ToolError(f"{self.shown} is a directory; give the path of a file.")
        self._read: bytes | None = None

    @property
    def exists(self) -> bool:
        return self.stat is not None

    def read_bytes(self) -> bytes:
        assert self.fd is not None
        if self._read is None:
            with open_entry(self.fd, self.name, self.shown) as f:
                self._read = f.read()
        return self._read

    def save(self, before: str | None, after: str) -> PatchFile:
        """Write ``after`` atomically; the change as a patch."""
        self.put(after.encode("utf-8"))
        return unified_diff(self.shown, before, after)

    def put(self, data: bytes) -> None:
        """Write ``data`` atomically, checkpointed."""
        assert self.fd is not None, "opened with create=True"
        old = self.read_bytes() if self.exists else None
        try:
            replace_entry(self.fd, self.name, data,
                          mode=self.stat.st_mode if self.stat is not None else None)
        except OSError as exc:
            raise ToolError(f"Could not write {self.shown}: {exc.strerror or exc}.") from exc
        self._checkpoint(old, data)

    def remove(self) -> None:
        """Delete the file, checkpointed (OSError as ``os.unlink`` raises it)."""
        assert self.fd is not None and self.exists
        old = self.read_bytes()
        os.unlink(self.name, dir_fd=self.fd)
        self._checkpoint(old, None)

    def _checkpoint(self, before: bytes | None, after: bytes | None) -> None:
        if self.ctx is not None and before != after:
            file_changed(self.ctx, self.tool, self.located.base, self.located.rel, before, after)


@contextlib.contextmanager
def target(ctx: ToolContext, tool: str, path: str, *, create: bool) -> Iterator[Target]:
    """The checked file ``path`` names; missing folders on the way are made when ``create``."""
    located = locate(session_root(ctx, tool), path, for_writing=True)
    # the store's files (however spelled: a link, a hard link) and other sessions' outputs
    check(fence_of(ctx), located, writing=True, tool=tool)
    with contextlib.ExitStack() as stack:
        try:
            fd, name = stack.enter_context(parent_dir(located, create=create))
            found = Target(fd, name, located, ctx, tool)
        except OSError as exc:
            if not isinstance(exc, FileNotFoundError) or create:
                raise ToolError(f"Could not {tool} {located.shown}: {exc.strerror or exc}.") from exc
            found = Target(None, "", located, ctx, tool)  # a folder on the way is missing: so is the file
        yield found


def changed(patch: PatchFile) -> str:
    return f"+{patch.additions} −{patch.deletions} lines"


def write(path: str, content: str, *, ctx: ToolContext) -> ToolResult:
    """Create or overwrite a file.

    path: File to write, relative to the root.
    content: The file's complete new text.
    """
    with target(ctx, "write", path, create=True) as file:
        before = file.read_bytes().decode("utf-8", "replace") if file.exists else None
        patch = file.save(before, content)
    shown_path = file.shown
    if before is None:
        lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
        output = f"Created {shown_path} ({lines:,} lines)."
    elif before == content:
        output = f"{shown_path} already had this content; nothing changed."
    else:
        output = f"Overwrote {shown_path} ({changed(patch)})."
    return ToolResult(output, title=shown_path, changes=[patch])


def write_tool() -> Tool:
    tool = tool_from_function(write, name="write", description=DESCRIPTION, mutating=True)
    tool.subject = path_subject(for_writing=True)
    tool.models = edits_with_write
    return tool


def edits_with_write(model: str) -> bool:
    """Every model but those that get apply_patch instead (registry.wants_apply_patch)."""
    return not wants_apply_patch(model)
