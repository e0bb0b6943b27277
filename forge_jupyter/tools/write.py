"""The `write` tool: create or overwrite a file with the given text."""

from __future__ import annotations

from pathlib import Path

from ..errors import ToolError
from .base import Tool, ToolContext, ToolResult, tool_from_function
from .patch import unified_diff
from .paths import display_path, resolve_inside, session_root, write_text_atomic

DESCRIPTION = """Create a file, or replace everything in an existing one, with `content`
(written exactly as given, as UTF-8; missing parent directories are created).
- path: relative to the session's root directory; paths outside the root are refused.
To change part of an existing file prefer edit, which does not need the whole text. The
result reports the lines added and removed."""


def read_text(target: Path, shown_path: str) -> str:
    """A file's text exactly as stored (line endings kept), refused when it is not UTF-8."""
    try:
        return target.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError(f"{shown_path} is not UTF-8 text ({exc.reason} at byte {exc.start}); "
                        "only text files can be edited this way. Use python for other files.") from exc


def save(root: Path, target: Path, before: str | None, after: str) -> dict:
    """Write ``after`` to ``target`` atomically; the change as ``metadata["patch"]``."""
    shown_path = display_path(root, target)
    try:
        write_text_atomic(target, after)
    except OSError as exc:
        raise ToolError(f"Could not write {shown_path}: {exc.strerror or exc}.") from exc
    return unified_diff(shown_path, before, after)


def changed(patch: dict) -> str:
    return f"+{patch['additions']} −{patch['deletions']} lines"


def write(path: str, content: str, *, ctx: ToolContext) -> ToolResult:
    """Create or overwrite a file.

    path: File to write, relative to the root.
    content: The file's complete new text.
    """
    root = session_root(ctx, "write")
    target = resolve_inside(root, path)
    shown_path = display_path(root, target)
    if target.is_dir():
        raise ToolError(f"{shown_path} is a directory; give a file path to write.")
    before = None
    if target.exists():
        before = target.read_bytes().decode("utf-8", "replace")
    patch = save(root, target, before, content)
    if before is None:
        lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
        output = f"Created {shown_path} ({lines:,} lines)."
    elif before == content:
        output = f"{shown_path} already had this content; nothing changed."
    else:
        output = f"Overwrote {shown_path} ({changed(patch)})."
    return ToolResult(output, title=shown_path, metadata={"patch": patch})


def write_tool() -> Tool:
    return tool_from_function(write, name="write", description=DESCRIPTION, mutating=True)
