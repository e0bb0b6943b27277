"""The V4A patch format GPT-5-family and codex models write for ``apply_patch``: parsed, and
its hunks applied to a file's text (pure functions; tools/apply_patch.py does the files).

    *** Begin Patch
    *** Add File: path            then every line "+text"
    *** Delete File: path         nothing follows
    *** Update File: path
    *** Move to: new/path         optional, right after Update
    @@ def f():                   a hunk: an optional anchor line to seek first, then
     context                      " " context, "-" removed, "+" added lines
    -old
    +new
    *** End of File               optional: the hunk ends at the end of the file
    *** End Patch

A hunk's context and removed lines must be found in the file, in order, after the previous
hunk (exactly, or differing only in trailing whitespace); otherwise the file fails, naming the
hunk's line in the patch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

BEGIN, END, EOF = "*** Begin Patch", "*** End Patch", "*** End of File"
HEADERS = {"*** Add File: ": "add", "*** Delete File: ": "delete", "*** Update File: ": "update"}
MOVE = "*** Move to: "
EXAMPLE = ("*** Begin Patch\n*** Update File: src/app.py\n@@ def greet():\n-    print(\"Hi\")\n"
           "+    print(\"Hello\")\n*** End Patch")


class PatchError(ValueError):
    """The patch cannot be read or does not fit the file: the message says where and why."""


@dataclass
class Hunk:
    line: int  # where it starts in the patch (1-based), for errors
    anchors: list[str] = field(default_factory=list)  # "@@ text" lines, sought in order first
    body: list[tuple[str, str]] = field(default_factory=list)  # (" " | "-" | "+", text)
    at_eof: bool = False

    @property
    def old(self) -> list[str]:
        """The context and removed lines, in order: what must be found in the file."""
        return [text for mark, text in self.body if mark != "+"]


def _merge(body: list[tuple[str, str]], found: list[str]) -> list[str]:
    """What replaces ``found`` (the file's lines matching a hunk's old lines): context lines
    stay as the file has them (their trailing blanks, say), added lines come from the patch."""
    out: list[str] = []
    i = 0
    for mark, text in body:
        if mark == "+":
            out.append(text)
        else:
            if mark == " ":
                out.append(found[i])
            i += 1
    return out


@dataclass
class FileOp:
    kind: Literal["add", "delete", "update"]
    path: str
    line: int
    move_to: str | None = None
    content: str = ""  # an added file's text
    hunks: list[Hunk] = field(default_factory=list)


def _header(line: str) -> tuple[str, str] | None:
    for prefix, kind in HEADERS.items():
        if line.startswith(prefix):
            return kind, line[len(prefix):].strip()
    return None


def _unknown(n: int, line: str) -> PatchError:
    return PatchError(
        f"line {n} of the patch, {line[:80]!r}, is not a header apply_patch knows: a file section "
        "starts with '*** Add File: path', '*** Update File: path' or '*** Delete File: path', "
        "'*** Move to: path' may follow Update, and the patch ends with '*** End Patch'.")


def parse(text: str) -> list[FileOp]:
    """The file operations of a V4A patch, or a PatchError naming the line that is wrong."""
    lines = [x.rstrip("\r") for x in text.strip().split("\n")] if text.strip() else []
    if not lines:
        raise PatchError(f"The patch is empty. Send the changes in this form:\n{EXAMPLE}")
    if lines[0].strip() != BEGIN:
        raise PatchError(f"The patch must start with the line '{BEGIN}' (line 1 is "
                         f"{lines[0][:80]!r}). For example:\n{EXAMPLE}")
    if lines[-1].strip() != END:
        raise PatchError(f"The patch must end with the line '{END}' (its last line is "
                         f"{lines[-1][:80]!r}); was it cut off? Send the whole patch again.")
    ops: list[FileOp] = []
    op: FileOp | None = None
    hunk: Hunk | None = None
    for n, line in enumerate(lines[1:-1], start=2):
        found = _header(line)
        if found is not None:
            kind, path = found
            if not path:
                raise PatchError(f"line {n} of the patch names no file: {line!r}.")
            op, hunk = FileOp(kind, path, n), None  # type: ignore[arg-type]
            ops.append(op)
        elif line.startswith(MOVE):
            if op is None or op.kind != "update" or op.hunks or op.move_to is not None:
                raise PatchError(f"line {n} of the patch: '*** Move to:' must come right after "
                                 "'*** Update File: path' (once).")
            op.move_to = line[len(MOVE):].strip()
            if not op.move_to:
                raise PatchError(f"line {n} of the patch names no file to move to.")
        elif line.strip() == EOF and hunk is not None:
            hunk.at_eof = True
        elif line.startswith("***"):
            raise _unknown(n, line)
        elif op is None:
            raise PatchError(f"line {n} of the patch, {line[:80]!r}, is outside any file section: "
                             "start one with '*** Add File: path', '*** Update File: path' or "
                             "'*** Delete File: path'.")
        elif op.kind == "add":
            if not line.startswith("+"):
                raise PatchError(f"line {n} of the patch: every line of an added file "
                                 f"({op.path}) starts with '+'; found {line[:80]!r}.")
            op.content += line[1:] + "\n"
        elif op.kind == "delete":
            raise PatchError(f"line {n} of the patch: nothing may follow '*** Delete File: "
                             f"{op.path}' but the next file's header; found {line[:80]!r}.")
        else:
            hunk = _hunk_line(op, hunk, n, line)
    if not ops:
        raise PatchError(f"The patch holds no file operations. For example:\n{EXAMPLE}")
    for op in ops:
        if op.kind == "update" and not op.hunks and op.move_to is None:
            raise PatchError(f"'*** Update File: {op.path}' (line {op.line} of the patch) has no "
                             "hunks: add '@@' hunks with ' ', '-' and '+' lines, or leave it out.")
    return ops


def _hunk_line(op: FileOp, hunk: Hunk | None, n: int, line: str) -> Hunk:
    """The hunk after reading ``line`` of an update section (a new one at '@@')."""
    if line.startswith("@@"):
        anchor = line[2:].strip()
        if hunk is None or hunk.body or hunk.at_eof:
            hunk = Hunk(n)
            op.hunks.append(hunk)
        if anchor:  # consecutive "@@ class A" / "@@ def f" narrow down step by step
            hunk.anchors.append(anchor)
        return hunk
    if hunk is None:  # the first hunk may leave out its "@@"
        hunk = Hunk(n)
        op.hunks.append(hunk)
    elif hunk.at_eof:
        raise PatchError(f"line {n} of the patch: '{EOF}' ends a hunk of {op.path}; start the "
                         "next hunk with '@@'.")
    mark, rest = (line[:1], line[1:]) if line else (" ", "")  # a bare empty line: empty context
    if mark in (" ", "-", "+"):
        hunk.body.append((mark, rest))
    else:
        raise PatchError(f"line {n} of the patch: in '*** Update File: {op.path}' every hunk line "
                         "starts with ' ' (context), '-' (removed) or '+' (added), or '@@' for a "
                         f"new hunk; found {line[:80]!r}.")
    return hunk


# ---------------------------------------------------------------------------- applying


def _find(lines: list[str], want: list[str], start: int, at_eof: bool) -> int | None:
    """Where ``want`` occurs in ``lines`` from ``start``: exactly, else differing only in
    trailing whitespace; at the very end when ``at_eof``."""
    starts = [len(lines) - len(want)] if at_eof else range(start, len(lines) - len(want) + 1)
    for same in (lambda a, b: a == b, lambda a, b: a.rstrip() == b.rstrip()):
        for i in starts:
            if i >= start and all(same(lines[i + k], w) for k, w in enumerate(want)):
                return i
    return None


def apply_hunks(text: str, hunks: list[Hunk], shown: str) -> str:
    """``text`` with ``hunks`` applied in order, line endings kept; a PatchError naming the
    hunk's line in the patch when its context is not in the file."""
    crlf = "\r\n" in text
    ends = text.endswith("\n")
    lines = text.split("\n") if text else []
    if ends:
        lines.pop()
    if crlf:
        lines = [x[:-1] if x.endswith("\r") else x for x in lines]
    cursor = 0
    for hunk in hunks:
        for anchor in hunk.anchors:
            at = next((i for i in range(cursor, len(lines)) if lines[i].strip() == anchor), None)
            if at is None:
                raise PatchError(f"{shown}: the hunk at line {hunk.line} of the patch seeks "
                                 f"'@@ {anchor[:80]}', and no line of {shown}"
                                 f"{_after(cursor)} reads so. Read the file and rewrite the hunk.")
            cursor = at + 1
        old = hunk.old
        if not old:  # only added lines: after the anchor, or at the end of the file
            at = cursor if hunk.anchors and not hunk.at_eof else len(lines)
        else:
            at = _find(lines, old, cursor, hunk.at_eof)
            if at is None:
                raise PatchError(_stale(lines, hunk, cursor, shown))
        new = _merge(hunk.body, lines[at:at + len(old)])
        lines[at:at + len(old)] = new
        cursor = at + len(new)
    out = ("\r\n" if crlf else "\n").join(lines)
    return out + ("\r\n" if crlf else "\n") if (ends or not text) and lines else out


def _after(cursor: int) -> str:
    return f" after line {cursor}" if cursor else ""


def _stale(lines: list[str], hunk: Hunk, cursor: int, shown: str) -> str:
    first = next((x for x in hunk.old if x.strip()), hunk.old[0])
    seen = [i + 1 for i, x in enumerate(lines) if x.strip() == first.strip()][:5]
    hint = (f" Its line {first[:80]!r} is at line {', '.join(map(str, seen))} of {shown}, but the "
            "lines around it differ." if seen else f" {first[:80]!r} is not in {shown} at all.")
    where = " at the end of the file" if hunk.at_eof else _after(cursor)
    return (f"{shown}: the hunk at line {hunk.line} of the patch does not match the file: its "
            f"{len(hunk.old)} context and removed lines were not found in order{where}.{hint} "
            "The file has changed or the hunk was misremembered: read the file again and write "
            "the hunk from its current text.")
