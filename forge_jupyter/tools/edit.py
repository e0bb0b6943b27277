"""The `edit` tool: replace an exact piece of text in a file."""

from __future__ import annotations

from ..errors import ToolError
from .base import Tool, ToolContext, ToolResult, tool_from_function
from .paths import path_subject
from .registry import wants_apply_patch
from .write import Target, changed, read_text, target

DESCRIPTION = """Replace `old_string` with `new_string` in a file under the session's root. \
old_string must match exactly (every space, tab and line break; copy it from read's output \
without the line-number prefix) and occur once — include surrounding lines to make it unique — \
unless replace_all. An empty old_string creates a new file. Reports the lines added and \
removed."""


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _occurrences(text: str, needle: str) -> list[int]:
    at, found = text.find(needle), []
    while at != -1:
        found.append(_line_of(text, at))
        at = text.find(needle, at + len(needle))
    return found


def _squash(line: str) -> str:
    return " ".join(line.split())


def _near_miss(text: str, needle: str) -> int | None:
    """The line where ``needle`` would match if whitespace did not count."""
    want = [_squash(x) for x in needle.strip("\n").split("\n")]
    lines = [_squash(x) for x in text.split("\n")]
    if not any(want):
        return None
    for i in range(len(lines) - len(want) + 1):
        window = lines[i:i + len(want)]
        if len(want) == 1:
            if want[0] in window[0]:
                return i + 1
        elif (window[0].endswith(want[0]) and window[-1].startswith(want[-1])
              and window[1:-1] == want[1:-1]):
            return i + 1
    return None


def edit(path: str, old_string: str, new_string: str, replace_all: bool = False, *,
         ctx: ToolContext) -> ToolResult:
    """Replace an exact piece of text in a file.

    path: File to change, relative to the root.
    old_string: The exact text to replace.
    new_string: The text to put in its place.
    replace_all: Replace every occurrence instead of exactly one.
    """
    if old_string == new_string:
        raise ToolError("old_string and new_string are the same: there is nothing to change.")
    with target(ctx, "edit", path, create=old_string == "") as file:
        shown_path = file.shown
        if not file.exists:
            if old_string == "":
                patch = file.save(None, new_string)
                return ToolResult(f"Created {shown_path} ({changed(patch)}).", title=shown_path,
                                  metadata={"replacements": 0}, changes=[patch])
            raise ToolError(f"{shown_path} does not exist. Use write to create it, or check the "
                            "path with list or glob.")
        if old_string == "":
            raise ToolError(f"old_string is empty but {shown_path} already exists: give the exact "
                            "text to replace, or use write to replace the whole file.")
        return _replace(file, read_text(file.read_bytes(), shown_path), old_string, new_string,
                        replace_all)


def _replace(file: Target, before: str, old_string: str, new_string: str,
             replace_all: bool) -> ToolResult:
    shown_path = file.shown
    old, new = old_string, new_string
    if old not in before and "\r\n" in before and "\n" in old and "\r" not in old:
        # the file has Windows line endings, which read does not show
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
    lines = _occurrences(before, old)
    if not lines:
        hint = _near_miss(before, old_string)
        raise ToolError(
            f"old_string was not found in {shown_path}. It must match the file exactly, every space, "
            "tab and line break: read the file and copy the text from it (without the line-number "
            "prefix)." + (f" Line {hint} holds a passage that differs only in whitespace." if hint else ""))
    if len(lines) > 1 and not replace_all:
        where = ", ".join(map(str, lines[:10])) + (", …" if len(lines) > 10 else "")
        raise ToolError(f"old_string occurs {len(lines)} times in {shown_path} (at lines {where}). "
                        "Include more surrounding lines to make it unique, or pass replace_all=true "
                        "to replace every occurrence.")
    after = before.replace(old, new) if replace_all else before.replace(old, new, 1)
    patch = file.save(before, after)
    n = len(lines) if replace_all else 1
    return ToolResult(f"Edited {shown_path}: replaced {n} occurrence{'s' if n > 1 else ''} "
                      f"({changed(patch)}).", title=shown_path,
                      metadata={"replacements": n}, changes=[patch])


def edit_tool() -> Tool:
    tool = tool_from_function(edit, name="edit", description=DESCRIPTION, mutating=True)
    tool.subject = path_subject(for_writing=True)
    tool.models = edits_with_edit
    return tool


def edits_with_edit(model: str) -> bool:
    """Every model but those that get apply_patch instead (registry.wants_apply_patch)."""
    return not wants_apply_patch(model)
