"""The file tools, run as the Processor runs them: schema-checked arguments, a real directory."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from forge_jupyter.errors import ToolError
from forge_jupyter.message import PatchFile
from forge_jupyter.tools.base import Tool, ToolContext, ToolResult
from forge_jupyter.tools.edit import edit_tool
from forge_jupyter.tools.glob import GlobPattern, glob_tool
from forge_jupyter.tools.grep import grep_tool
from forge_jupyter.tools.list import list_tool
from forge_jupyter.tools.patch import unified_diff
from forge_jupyter.tools.paths import resolve_inside
from forge_jupyter.tools.read import read_tool
from forge_jupyter.tools.truncate import truncate
from forge_jupyter.tools.write import write_tool

TOOLS = {"read": read_tool(), "list": list_tool(), "glob": glob_tool(), "grep": grep_tool(),
         "write": write_tool(), "edit": edit_tool()}


@pytest.fixture
def root(tmp_path) -> Path:
    (tmp_path / "root").mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("top secret\n")
    return tmp_path / "root"


@pytest.fixture
def ctx(root, tmp_path) -> ToolContext:
    return ToolContext(session_id="ses", message_id="msg", call_id="call", part_id="prt",
                       root=str(root), output_dir=str(tmp_path / "outputs"))


def call(name: str, ctx: ToolContext, **args) -> ToolResult:
    tool: Tool = TOOLS[name]
    assert tool.validation_errors(args) == []
    return asyncio.run(tool.run(args, ctx))


def refused(name: str, ctx: ToolContext, **args) -> str:
    with pytest.raises(ToolError) as info:
        call(name, ctx, **args)
    return str(info.value)


def test_names_schemas_and_mutating_flags():
    assert {n: t.name for n, t in TOOLS.items()} == {n: n for n in TOOLS}
    assert {n for n, t in TOOLS.items() if t.mutating} == {"write", "edit"}
    read = TOOLS["read"]
    assert read.parameters["required"] == ["path"]
    assert read.validation_errors({"path": "a", "offset": -1}) != []
    for tool in TOOLS.values():
        assert "ctx" not in tool.parameters["properties"]
        assert "root" in tool.description


def test_a_session_without_a_root_is_refused(ctx):
    ctx.root = None
    assert "has none" in refused("read", ctx, path="a.txt")


# ------------------------------------------------------------------ read

def test_read_numbers_lines_like_cat_n(root, ctx):
    (root / "a.txt").write_text("alpha\nbeta\r\ngamma")
    r = call("read", ctx, path="a.txt")
    assert r.output == "     1\talpha\n     2\tbeta\n     3\tgamma\n\n(End of file: 3 lines.)"
    assert r.metadata["total_lines"] == 3 and r.metadata["more"] is False


def test_read_pages_with_offset_and_limit_and_says_where_to_go_on(root, ctx):
    (root / "n.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    r = call("read", ctx, path="n.txt", offset=3, limit=4)
    assert r.output.splitlines()[:4] == ["     4\tline 4", "     5\tline 5", "     6\tline 6", "     7\tline 7"]
    assert "Showing lines 4–7 of 10. Use offset=7 to read on." in r.output
    assert "End of file" in call("read", ctx, path="n.txt", offset=7).output
    assert "past the end" in refused("read", ctx, path="n.txt", offset=10)


def test_read_cuts_a_line_over_2000_characters(root, ctx):
    (root / "wide.txt").write_text("a" * 5000 + "\nshort\n" + "c" * 100_000 + "\n")
    first, second, third = call("read", ctx, path="wide.txt").output.splitlines()[:3]
    assert first == "     1\t" + "a" * 2000 + "… [line cut at 2,000 characters; it is 5,000 characters long]"
    assert second == "     2\tshort"
    assert third == "     3\t" + "c" * 2000 + "… [line cut at 2,000 characters; it is 97.7 KB long]"


def test_read_caps_one_call_at_50_kb_and_gives_the_next_offset(root, ctx):
    (root / "wide.txt").write_text(("b" * 1500 + "\n") * 100)
    r = call("read", ctx, path="wide.txt")
    shown = len([x for x in r.output.splitlines() if "\t" in x])
    assert len(r.output.encode()) <= 50 * 1024 + 200
    assert f"Output capped at 50.0 KB: showing lines 1–{shown} of 100. Use offset={shown}" in r.output


def test_read_refuses_binary_files_and_directories(root, ctx):
    (root / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(range(256)))
    (root / "sub").mkdir()
    assert "img.png is a binary file" in refused("read", ctx, path="img.png")
    assert "sub is a directory; use list" in refused("read", ctx, path="sub")
    assert "'nope.txt' does not exist" in refused("read", ctx, path="nope.txt")
    (root / "empty.txt").write_text("")
    assert call("read", ctx, path="empty.txt").output == "(empty file)"


def test_read_pages_through_a_truncated_output_saved_outside_the_root(root, ctx):
    full = "".join(f"result row {i}\n" for i in range(1, 5001))
    t = truncate(full, output_dir=ctx.output_dir, name=ctx.part_id)
    assert not Path(t.saved_path).is_relative_to(root)
    path, offset, limit = re.search(r'read\(path="([^"]+)", offset=(\d+), limit=(\d+)\)', t.text).groups()
    assert path == t.saved_path
    seen, offset = [], int(offset)
    while True:
        r = call("read", ctx, path=path, offset=offset, limit=int(limit))
        seen += [x.split("\t", 1)[1] for x in r.output.splitlines() if "\t" in x]
        if not r.metadata["more"]:
            break
        offset = int(re.search(r"Use offset=(\d+)", r.output).group(1))
    assert seen == [f"result row {i}" for i in range(2001, 5001)]
    # the exception is read's alone: the output folder is not a place to write or search
    assert "outside the root" in refused("write", ctx, path=path, content="x")
    assert "outside the root" in refused("grep", ctx, pattern="row", path=str(Path(path).parent))


# ------------------------------------------------------------------ list

def test_list_marks_directories_and_puts_them_first(root, ctx, tmp_path):
    (root / "b.txt").write_text("")
    (root / "A.txt").write_text("")
    (root / "zdir").mkdir()
    (root / "cache.pyc").write_text("")
    (root / "link").symlink_to(tmp_path / "outside")
    r = call("list", ctx, ignore=["*.pyc"])
    assert r.output.splitlines() == [
        "./ — 2 directories, 2 files (after ignore patterns)",
        f"link/ -> {tmp_path / 'outside'}", "zdir/", "A.txt", "b.txt"]
    assert "is a file" in refused("list", ctx, path="b.txt")


def test_list_shows_the_first_100_entries_and_how_many_more(root, ctx):
    for i in range(150):
        (root / f"f{i:03d}.txt").write_text("")
    lines = call("list", ctx, path=".").output.splitlines()
    assert lines[1:101] == [f"f{i:03d}.txt" for i in range(100)]
    assert lines[101].startswith("… and 50 more") and len(lines) == 102


# ------------------------------------------------------------------ glob

def test_glob_lists_matches_newest_first_and_skips_tool_folders(root, ctx):
    for i, rel in enumerate(["old.py", "pkg/mid.py", "pkg/deep/new.py", "notes.md",
                             ".git/hook.py", "node_modules/m.py", "__pycache__/c.py"]):
        f = root / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text("")
        os.utime(f, (1_000_000 + i, 1_000_000 + i))
    assert call("glob", ctx, pattern="*.py").output.splitlines() == ["pkg/deep/new.py", "pkg/mid.py", "old.py"]
    assert call("glob", ctx, pattern="pkg/*.py").output.splitlines() == ["pkg/mid.py"]
    assert call("glob", ctx, pattern="**/*.{py,md}", path="pkg").output.splitlines() == [
        "pkg/deep/new.py", "pkg/mid.py"]
    assert call("glob", ctx, pattern="*.csv").output == "No files match '*.csv' in .."


@pytest.mark.parametrize(("pattern", "path", "matches"), [
    ("*.py", "a/b/c.py", True), ("a.py", "xa.py", False), ("?.txt", "ab.txt", False),
    ("src/*.py", "src/a.py", True), ("src/*.py", "src/x/a.py", False),
    ("src/**/*.py", "src/a.py", True), ("src/**/*.py", "src/x/y/a.py", True),
    ("*.{csv,tsv}", "d/x.tsv", True), ("data_[0-9].csv", "data_7.csv", True),
    ("data_[!0-9].csv", "data_7.csv", False), ("./top.txt", "top.txt", True),
])
def test_glob_pattern_semantics(pattern, path, matches):
    assert GlobPattern(pattern).match(path) is matches


def test_glob_shows_the_first_100_matches_and_how_many_more(root, ctx):
    for i in range(120):
        f = root / "data" / f"{i:03d}.csv"
        f.parent.mkdir(exist_ok=True)
        f.write_text("")
        os.utime(f, (1_000_000 + i, 1_000_000 + i))
    lines = call("glob", ctx, pattern="**/*.csv").output.splitlines()
    assert lines[:100] == [f"data/{i:03d}.csv" for i in range(119, 19, -1)]
    assert lines[100].startswith("… and 20 more") and len(lines) == 101


# ------------------------------------------------------------------ grep

def test_grep_prints_file_line_text_and_honours_include(root, ctx):
    (root / "a.py").write_text("import os\nx = os.getcwd()\n")
    (root / "sub").mkdir()
    (root / "sub" / "b.txt").write_text("no\nos here\n")
    (root / "blob.bin").write_bytes(b"os\0os\0")
    (root / "node_modules").mkdir()
    (root / "node_modules" / "c.py").write_text("import os\n")
    r = call("grep", ctx, pattern=r"\bos\b")
    assert r.output.splitlines() == ["3 matches in 2 files", "a.py:1: import os",
                                     "a.py:2: x = os.getcwd()", "sub/b.txt:2: os here"]
    assert call("grep", ctx, pattern="os", include="*.txt").output.splitlines()[1:] == ["sub/b.txt:2: os here"]
    assert call("grep", ctx, pattern="(?i)IMPORT", path="a.py").output.splitlines()[1:] == ["a.py:1: import os"]
    assert call("grep", ctx, pattern="zzz").output == "No matches for 'zzz' in .."
    assert "not a valid regular expression" in refused("grep", ctx, pattern="(unclosed")


def test_grep_shows_the_first_100_matches_and_cuts_long_lines(root, ctx):
    (root / "many.txt").write_text("hit\n" * 150 + "hit" + "z" * 3000 + "\n")
    lines = call("grep", ctx, pattern="hit").output.splitlines()
    assert lines[0] == "151 matches in 1 file" and lines[1] == "many.txt:1: hit"
    assert lines[101].startswith("… and 51 more") and len(lines) == 102
    (root / "many.txt").write_text("z" * 3000 + "hit\n")
    hit = call("grep", ctx, pattern="hit").output.splitlines()[1]
    assert hit.startswith("many.txt:1: " + "z" * 2000 + "… [line cut at 2,000 characters")


def test_grep_does_not_follow_a_link_to_a_file_outside_the_root(root, ctx, tmp_path):
    (root / "leak.txt").symlink_to(tmp_path / "outside" / "secret.txt")
    assert call("grep", ctx, pattern="secret").output.startswith("No matches")
    assert call("glob", ctx, pattern="*.txt").output.startswith("No files match")


# ------------------------------------------------------------------ confinement

ESCAPES = {"read": {}, "list": {}, "glob": {"pattern": "*"}, "grep": {"pattern": "x"},
           "write": {"content": "x"}, "edit": {"old_string": "", "new_string": "x"}}


@pytest.mark.parametrize("tool", sorted(ESCAPES))
@pytest.mark.parametrize("path", ["../outside/secret.txt", "/etc/passwd", "sub/../../outside"])
def test_paths_outside_the_root_are_refused_naming_path_and_root(tool, path, root, ctx):
    message = refused(tool, ctx, path=path, **ESCAPES[tool])
    assert f"{path!r} resolves to" in message and f"outside the root directory {root}" in message


@pytest.mark.parametrize("tool", sorted(ESCAPES))
def test_a_link_inside_the_root_that_points_outside_is_refused(tool, root, ctx, tmp_path):
    (root / "escape").symlink_to(tmp_path / "outside")
    target = "escape" if tool in ("list", "glob") else "escape/secret.txt"
    message = refused(tool, ctx, path=target, **ESCAPES[tool])
    assert f"{target!r} leads through a symbolic link to a place outside" in message
    assert str(tmp_path / "outside") not in message.replace(str(root), "")
    assert f"outside the root directory {root}" in message
    assert (tmp_path / "outside" / "secret.txt").read_text() == "top secret\n"


def test_links_that_stay_inside_the_root_are_followed(root, ctx):
    (root / "real.txt").write_text("inside\n")
    (root / "alias.txt").symlink_to(root / "real.txt")
    assert "1\tinside" in call("read", ctx, path="alias.txt").output
    assert resolve_inside(root, "alias.txt") == root / "real.txt"
    assert resolve_inside(root, str(root / "real.txt")) == root / "real.txt"


# ------------------------------------------------------------------ write, edit and their patches

def apply_patch(tmp_path: Path, files: dict[str, str | None], diff: str) -> Path:
    """A copy of ``files`` (None: absent) with ``diff`` applied by GNU patch."""
    work = tmp_path / "patched"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    for rel, text in files.items():
        if text is not None:
            (work / rel).parent.mkdir(parents=True, exist_ok=True)
            (work / rel).write_bytes(text.encode())
    subprocess.run(["patch", "-p1", "--quiet", "--batch"], input=diff.encode(), cwd=work, check=True)
    return work


needs_patch = pytest.mark.skipif(shutil.which("patch") is None, reason="GNU patch not installed")


@needs_patch
def test_write_creates_a_file_and_its_patch_creates_it_too(root, ctx, tmp_path):
    r = call("write", ctx, path="pkg/new.py", content="print('hi')\nx = 1")
    assert (root / "pkg" / "new.py").read_text() == "print('hi')\nx = 1"
    umask = os.umask(0)
    os.umask(umask)
    assert (root / "pkg" / "new.py").stat().st_mode & 0o777 == 0o666 & ~umask
    assert [p.name for p in (root / "pkg").iterdir()] == ["new.py"]  # no temporary file left
    assert r.output == "Created pkg/new.py (2 lines)."
    patch = r.changes[0]
    assert (patch.path, patch.additions, patch.deletions) == ("pkg/new.py", 2, 0)
    applied = apply_patch(tmp_path, {}, patch.diff)
    assert (applied / "pkg" / "new.py").read_text() == "print('hi')\nx = 1"


@needs_patch
def test_write_overwrites_and_reports_the_change(root, ctx, tmp_path):
    before = "a\nb\nc\n"
    (root / "f.txt").write_text(before)
    (root / "f.txt").chmod(0o640)
    r = call("write", ctx, path="f.txt", content="a\nB\nc\nd\n")
    assert r.output == "Overwrote f.txt (+2 −1 lines)."
    assert (root / "f.txt").stat().st_mode & 0o777 == 0o640
    applied = apply_patch(tmp_path, {"f.txt": before}, r.changes[0].diff)
    assert (applied / "f.txt").read_text() == "a\nB\nc\nd\n"
    assert "is a directory" in refused("write", ctx, path=".", content="x")


@needs_patch
def test_edit_replaces_one_exact_occurrence_and_its_patch_applies(root, ctx, tmp_path):
    before = "def f():\n    return 1\n\n\ndef g():\n    return 2\n"
    (root / "m.py").write_text(before)
    r = call("edit", ctx, path="m.py", old_string="    return 2", new_string="    return 3\n    # done")
    after = (root / "m.py").read_text()
    assert after == before.replace("    return 2", "    return 3\n    # done")
    assert r.output == "Edited m.py: replaced 1 occurrence (+2 −1 lines)."
    assert r.changes[0].path == "m.py" and r.metadata["replacements"] == 1
    applied = apply_patch(tmp_path, {"m.py": before}, r.changes[0].diff)
    assert (applied / "m.py").read_text() == after


def test_edit_not_found_says_how_to_fix_it(root, ctx):
    (root / "m.py").write_text("x  =  1\n")
    message = refused("edit", ctx, path="m.py", old_string="x = 1", new_string="x = 2")
    assert "old_string was not found in m.py" in message and "copy the text" in message
    assert "Line 1 holds a passage that differs only in whitespace" in message
    assert "does not exist" in refused("edit", ctx, path="gone.py", old_string="a", new_string="b")
    assert "nothing to change" in refused("edit", ctx, path="m.py", old_string="x", new_string="x")


def test_edit_ambiguous_names_the_lines_and_offers_replace_all(root, ctx):
    (root / "m.py").write_text("a = 0\nb = 0\nc = 1\nd = 0\n")
    message = refused("edit", ctx, path="m.py", old_string="= 0", new_string="= 9")
    assert "occurs 3 times in m.py (at lines 1, 2, 4)" in message
    assert "Include more surrounding lines" in message and "replace_all=true" in message
    assert (root / "m.py").read_text() == "a = 0\nb = 0\nc = 1\nd = 0\n"
    r = call("edit", ctx, path="m.py", old_string="= 0", new_string="= 9", replace_all=True)
    assert (root / "m.py").read_text() == "a = 9\nb = 9\nc = 1\nd = 9\n"
    assert r.metadata["replacements"] == 3 and r.changes[0].additions == 3


def test_edit_keeps_windows_line_endings(root, ctx):
    (root / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    call("edit", ctx, path="w.txt", old_string="one\ntwo", new_string="1\n2")
    assert (root / "w.txt").read_bytes() == b"1\r\n2\r\nthree\r\n"


def test_edit_with_an_empty_old_string_creates_a_new_file_only(root, ctx):
    r = call("edit", ctx, path="new.txt", old_string="", new_string="hello\n")
    assert (root / "new.txt").read_text() == "hello\n" and r.changes[0].additions == 1
    assert "already exists" in refused("edit", ctx, path="new.txt", old_string="", new_string="x")


def test_edit_refuses_files_that_are_not_utf8(root, ctx):
    (root / "latin.txt").write_bytes("café\n".encode("latin-1"))
    assert "is not UTF-8 text" in refused("edit", ctx, path="latin.txt", old_string="caf", new_string="x")


def test_unified_diff_counts_lines_that_look_like_headers():
    d = unified_diff("x.txt", "--- a\n", "+++ b\n")
    assert (d.additions, d.deletions) == (1, 1)
    assert d.diff.splitlines()[:2] == ["--- a/x.txt", "+++ b/x.txt"]
    assert unified_diff("x.txt", "same\n", "same\n") == PatchFile(**{
        "path": "x.txt", "diff": "", "additions": 0, "deletions": 0})
