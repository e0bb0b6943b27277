"""The `apply_patch` tool: GPT-5-family and codex models' edit and write (registry.py picks
who sees it), taking the V4A patch those models are trained on (v4a.py).

The same confinement as edit and write (each path located under the root, its folder reached
without following links, the store's files refused) and the same permissions, checked per path
the patch names (a move's both ends). A patch applies whole or not at all: every file is read
and every hunk matched before the first byte is written, so a stale hunk in one file leaves
every file of the patch as it was.
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Any

from ..errors import ToolError
from ..message import PatchFile
from .base import Tool, ToolContext, ToolResult, tool_from_function
from .patch import unified_diff
from .paths import ignores_case, path_subject, session_root
from .permission import PathSubject
from .registry import wants_apply_patch
from .v4a import FileOp, PatchError, apply_hunks, parse
from .write import Target, changed, read_text, target

DESCRIPTION = """Create, change, move and delete files under the session's root with one patch \
in `input`: '*** Begin Patch', then per file '*** Add File: path' (every line '+text'), \
'*** Delete File: path', or '*** Update File: path' (optionally '*** Move to: new/path') with \
hunks — '@@ optional anchor line', then ' ' context, '-' removed and '+' added lines, copied \
exactly from the file — and '*** End Patch'. Paths are relative to the root. The patch applies \
whole or not at all."""

MAX_FILES = 100  # file sections in one patch: each holds a folder open until the patch is written


@dataclasses.dataclass
class _Change:
    op: FileOp
    source: Target
    before: str | None  # None: the file is created
    after: str | None  # None: the file is deleted
    dest: Target | None = None  # a move's destination
    new_path: str | None = None  # a move's destination as written, for the write phase


def apply_patch(input: str, *, ctx: ToolContext) -> ToolResult:  # noqa: A002 (Codex's name)
    """Apply a V4A patch (add, update, move, delete files).

    input: The whole patch, from '*** Begin Patch' to '*** End Patch'.
    """
    try:
        ops = parse(input)
    except PatchError as exc:
        raise ToolError(str(exc)) from exc
    if len(ops) > MAX_FILES:
        raise ToolError(f"The patch has {len(ops)} file sections; apply_patch takes at most "
                        f"{MAX_FILES} at once. Split it into several patches.")
    fold = ignores_case(str(session_root(ctx, "apply_patch")))
    with contextlib.ExitStack() as stack:
        def open_target(path: str) -> Target:
            return stack.enter_context(target(ctx, "apply_patch", path, create=False))

        seen: dict[str, str] = {}
        changes = []
        for op in ops:
            change = _check(op, open_target)
            for t in (change.source, change.dest):
                if t is None:
                    continue
                key = t.shown.casefold() if fold else t.shown
                if key in seen:
                    raise ToolError(f"The patch names {t.shown} twice (as {seen[key]!r} and as "
                                    f"{op.path!r}): put all of a file's changes in one section. "
                                    "Nothing was changed.")
                seen[key] = op.path
            changes.append(change)
        # every file read and every hunk matched: now write, in the patch's order
        return _write(ctx, changes)


def _check(op: FileOp, open_target: Any) -> _Change:
    """The change ``op`` makes, checked against the files as they are (nothing written)."""
    file = open_target(op.path)
    if op.kind == "add":
        if file.exists:
            raise ToolError(f"{file.shown} already exists, so '*** Add File' cannot create it: "
                            "use '*** Update File' to change it. Nothing was changed.")
        return _Change(op, file, None, op.content)
    if not file.exists:
        raise ToolError(f"{file.shown} does not exist (line {op.line} of the patch): check the "
                        "path with list or glob, or create it with '*** Add File'. Nothing was "
                        "changed.")
    data = file.read_bytes()
    if op.kind == "delete":
        return _Change(op, file, data.decode("utf-8", "replace"), None)
    before = read_text(data, file.shown)
    try:
        after = apply_hunks(before, op.hunks, file.shown)
    except PatchError as exc:
        raise ToolError(f"{exc} Nothing of this patch was applied, to {file.shown} or any "
                        "other file.") from exc
    change = _Change(op, file, before, after)
    if op.move_to is not None:
        dest = open_target(op.move_to)
        if dest.shown != file.shown:
            if dest.exists:
                raise ToolError(f"{dest.shown} already exists, so {file.shown} cannot be moved "
                                "there: pick another name or delete it first. Nothing was changed.")
            change.dest, change.new_path = dest, op.move_to
    return change


def _deleted(path: str, before: str) -> PatchFile:
    """A patch removing ``path`` (``+++ /dev/null``, as ``patch -p1`` deletes a file)."""
    patch = unified_diff(path, before, "")
    patch.diff = patch.diff.replace(f"+++ b/{path}\n", "+++ /dev/null\n", 1)
    return patch


def _write(ctx: ToolContext, changes: list[_Change]) -> ToolResult:
    patches: list[PatchFile] = []
    done: list[str] = []
    for c in changes:
        src = c.source
        try:
            if c.after is None:  # delete
                assert src.fd is not None and c.before is not None
                src.remove()
                patches.append(_deleted(src.shown, c.before))
                done.append(f"deleted {src.shown}")
            elif c.dest is not None:  # move: the new file first, then the old one goes
                patches.append(_save(ctx, c.dest, c.new_path or "", None, c.after))
                assert src.fd is not None and c.before is not None
                src.remove()
                patches.append(_deleted(src.shown, c.before))
                done.append(f"moved {src.shown} to {c.dest.shown}")
            else:
                patches.append(_save(ctx, src, c.op.path, c.before, c.after))
                verb = "added" if c.before is None else "updated"
                done.append(f"{verb} {src.shown} ({changed(patches[-1])})")
        except OSError as exc:
            so_far = "; ".join(done) or "nothing"
            raise ToolError(f"Could not write {src.shown}: {exc.strerror or exc}. Already done "
                            f"before it: {so_far}.") from exc
    title = ", ".join(p.path for p in patches[:3]) + (", …" if len(patches) > 3 else "")
    return ToolResult("Applied the patch: " + "; ".join(done) + ".", title=title,
                      changes=patches)


def _save(ctx: ToolContext, file: Target, path: str, before: str | None, after: str) -> PatchFile:
    if file.fd is not None:
        return file.save(before, after)
    # a folder on the way is missing: made now, after every check passed (walked without links)
    with target(ctx, "apply_patch", path, create=True) as made:
        if made.exists:
            raise ToolError(f"{made.shown} appeared while the patch was being applied; nothing "
                            "more was written. Read it and send the patch again.")
        return made.save(before, after)


def patch_subject(args: dict[str, Any], root: str | None,
                  output_dir: str | None = None) -> tuple[PathSubject, ...]:
    """Every path the patch names (a move's both ends), normalized like the file tools' paths:
    the permission gate checks each, and the strictest verdict holds."""
    try:
        ops = parse(args.get("input", ""))
    except PatchError as exc:
        raise ToolError(str(exc)) from exc
    one = path_subject(for_writing=True)
    paths = [p for op in ops for p in (op.path, op.move_to) if p is not None]
    return tuple(one({"path": p}, root) for p in paths)


@dataclasses.dataclass
class PatchTool(Tool):
    """apply_patch, whose one argument is checked as a patch before the permission gate:
    a malformed patch is an invalid argument, not a permission question."""

    def validation_errors(self, args: Any) -> list[str]:
        problems = super().validation_errors(args)
        if problems:
            return problems
        try:
            parse(args["input"])
        except PatchError as exc:
            return [f"input: {exc}"]
        return []


def apply_patch_tool() -> Tool:
    base = tool_from_function(apply_patch, name="apply_patch", description=DESCRIPTION,
                              mutating=True)
    fields = {f.name: getattr(base, f.name) for f in dataclasses.fields(Tool) if f.init}
    return PatchTool(**{**fields, "subject": patch_subject, "models": wants_apply_patch})
