"""apply_patch for GPT-5-family models (issue 18, item 2), through the real prompt path: the
fake model server scripts the calls, real litellm carries them, files are real, the store a
real DuckDB file. Asserted on what the server received, what is on disk and what is stored."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from forge_jupyter.message import PatchPart
from forge_jupyter.testing import Turn, tool_call
from forge_jupyter.tools.registry import wants_apply_patch
from forge_jupyter.tools.v4a import PatchError, apply_hunks, parse

GPT5 = "gpt-5"  # the fake server is reached as openai/<name>


@pytest.fixture
def root(tmp_path) -> Path:
    root = tmp_path / "root"
    for folder in ("locked", "work", "src"):
        (root / folder).mkdir(parents=True)
    (root / "locked" / "a.txt").write_text("secret\n")
    (root / "link").symlink_to(root / "locked")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "x.txt").write_text("outside\n")
    (root / "out").symlink_to(tmp_path / "outside")
    return root


def patch(*sections: str) -> str:
    return "*** Begin Patch\n" + "".join(sections) + "*** End Patch\n"


def run_patches(make_forge, server, root: Path, patches: list[str], model: str = GPT5,
                permissions=("apply_patch:*=allow",)):
    """One prompt whose model sends every patch (parallel calls); the forge and their parts."""
    server.add(Turn([tool_call("apply_patch", {"input": p}) for p in patches]), Turn.text("done"))
    forge = make_forge(builtin_tools=True, root=str(root), db="duckdb", model=model,
                       permissions=list(permissions))
    assert forge.session("s").prompt("change the files").text == "done"
    parts = forge.session("s").messages()[1].tool_parts
    assert [p.tool for p in parts] == ["apply_patch"] * len(patches)
    return forge, parts


def files_under(path: Path) -> dict[str, str]:
    return {p.relative_to(path).as_posix(): p.read_text() for p in sorted(path.rglob("*"))
            if p.is_file() and not p.is_symlink()}


# ------------------------------------------------------------------ who sees which tools


@pytest.mark.parametrize("model", ["openai/gpt-5", "gpt-5-mini", "openai/gpt-5.1-codex",
                                   "azure/gpt-5", "openrouter/openai/gpt-5", "OpenAI/GPT-5-Mini",
                                   " gpt-5 ", "codex-mini-latest", "ft:gpt-5-mini:acme::x1",
                                   "gpt-6", "openai/GPT-5.2"])
def test_gpt5_family_and_codex_spellings_get_apply_patch(model):
    assert wants_apply_patch(model)


@pytest.mark.parametrize("model", ["openai/gpt-4o", "gpt-4.1", "anthropic/claude-sonnet-4-5",
                                   "gpt-oss-120b", "openai/gpt-3.5-turbo", "chatgpt-4o-latest",
                                   "ollama/llama3", "openai/not-gpt-5", "", None])
def test_other_models_get_edit_and_write(model):
    assert not wants_apply_patch(model)


def test_tool_tables_the_server_received_never_hold_both_spellings(make_forge, server, tmp_path):
    server.add(Turn.text("ok"), Turn.text("ok"), Turn.text("ok"))
    for protocol, model in (("openai", "gpt-5"), ("openai", "gpt-4o"),
                            ("anthropic", None)):  # anthropic/claude-sonnet-4-5
        make_forge(builtin_tools=True, root=str(tmp_path), protocol=protocol,
                   model=None if model is None else f"openai/{model}").session("s").prompt("hi")
    gpt5, gpt4o, claude = server.requests
    assert claude.model == "claude-sonnet-4-5"
    assert "apply_patch" in gpt5.tools and not {"edit", "write"} & set(gpt5.tools)
    for other in (gpt4o, claude):
        assert {"edit", "write"} <= set(other.tools) and "apply_patch" not in other.tools
    assert set(gpt5.tools) == set(gpt4o.tools) - {"edit", "write"} | {"apply_patch"}
    [schema] = [t["function"] for t in gpt5.body["tools"] if t["function"]["name"] == "apply_patch"]
    assert list(schema["parameters"]["properties"]) == ["input"]
    assert schema["parameters"]["required"] == ["input"]
    assert "*** Begin Patch" in schema["description"]


# ------------------------------------------------------------------ add, update, move, delete

BEFORE = {"src/app.py": "import os\n\n\ndef greet():\n    print('Hi')\n    return 1\n\n\n"
                        "def other():\n    pass\n\n\ndef last():\n    return 'end'\n",
          "src/old.txt": "one\ntwo\nthree\n",
          "src/gone.txt": "bye\n"}


def test_add_update_with_hunks_move_and_delete_in_one_patch(make_forge, server, root, tmp_path):
    for rel, text in BEFORE.items():
        (root / rel).write_text(text)
    text = patch(
        "*** Add File: docs/new.md\n+# Title\n+\n+body\n",
        "*** Update File: src/app.py\n@@ def greet():\n-    print('Hi')\n+    print('Hello')\n"
        "     return 1\n@@ def last():\n-    return 'end'\n+    return 'END'\n*** End of File\n",
        "*** Update File: ./src/old.txt\n*** Move to: src/renamed/new.txt\n@@\n one\n-two\n+2\n",
        "*** Delete File: src/gone.txt\n")
    forge, [part] = run_patches(make_forge, server, root, [text])
    assert part.state == "completed", part.error
    after = files_under(root)
    assert after["docs/new.md"] == "# Title\n\nbody\n"
    assert after["src/app.py"] == BEFORE["src/app.py"].replace("'Hi'", "'Hello'").replace(
        "'end'", "'END'")
    assert after["src/renamed/new.txt"] == "one\n2\nthree\n"
    assert "src/old.txt" not in after and "src/gone.txt" not in after
    assert "added docs/new.md" in part.output and "moved src/old.txt to src/renamed/new.txt" in part.output
    # the step's patch part: one diff per file, as edit and write record them
    [record] = [p for p in forge.session("s").messages()[1].parts if isinstance(p, PatchPart)]
    assert [(f.path, f.additions, f.deletions) for f in record.files] == [
        ("docs/new.md", 3, 0), ("src/app.py", 2, 2), ("src/renamed/new.txt", 3, 0),
        ("src/old.txt", 0, 3), ("src/gone.txt", 0, 1)]
    if shutil.which("patch"):  # the recorded diffs replay the change on a copy of the old tree
        work = tmp_path / "replayed"
        for rel, before in BEFORE.items():
            (work / rel).parent.mkdir(parents=True, exist_ok=True)
            (work / rel).write_text(before)
        diff = "".join(f.diff for f in record.files)
        subprocess.run(["patch", "-p1", "--quiet", "--batch"], input=diff.encode(), cwd=work,
                       check=True)
        assert files_under(work) == {k: v for k, v in after.items() if not k.startswith("locked")}


def test_a_stale_hunk_names_file_and_line_and_nothing_of_the_patch_is_written(
        make_forge, server, root):
    (root / "src" / "a.py").write_text("x = 1\ny = 2\n")
    (root / "src" / "b.py").write_text("def f():\n    return 1\n")
    before = files_under(root)
    text = patch("*** Update File: src/a.py\n@@\n-x = 1\n+x = 10\n",
                 "*** Add File: src/c.py\n+new\n",
                 "*** Update File: src/b.py\n@@\n def f():\n-    return 2\n+    return 3\n")
    _, [part] = run_patches(make_forge, server, root, [text])
    assert part.state == "error"
    assert "src/b.py: the hunk at line 9 of the patch does not match the file" in part.error
    assert "'def f():' is at line 1 of src/b.py" in part.error
    assert "Nothing of this patch was applied" in part.error
    assert files_under(root) == before  # neither a.py's hunk nor c.py


@pytest.mark.parametrize("section, message", [
    ("*** Update File: src/a.py\n@@ def missing():\n-x\n+y\n", "seeks '@@ def missing():'"),
    ("*** Update File: src/a.py\n@@\n-y = 2\n+y = 3\n*** End of File\n", "at the end of the file"),
    ("*** Update File: src/none.py\n@@\n-a\n+b\n", "src/none.py does not exist"),
    ("*** Delete File: src/none.py\n", "src/none.py does not exist"),
    ("*** Add File: src/a.py\n+x\n", "src/a.py already exists"),
    ("*** Update File: src/a.py\n*** Move to: src/b.py\n", "src/b.py already exists"),
    ("*** Update File: src/a.py\n@@\n-x = 1\n+x = 2\n*** Delete File: ./src//a.py\n",
     "names src/a.py twice"),
])
def test_what_does_not_fit_the_files_is_refused_whole(make_forge, server, root, section, message):
    (root / "src" / "a.py").write_text("x = 1\ny = 2\nz = 3\n")
    (root / "src" / "b.py").write_text("b\n")
    before = files_under(root)
    _, [part] = run_patches(make_forge, server, root, [patch(section)])
    assert part.state == "error" and message in part.error, part.error
    assert files_under(root) == before


# ------------------------------------------------------------------ confinement and permissions

ESCAPES = ["../outside/x.txt", "{root}/../outside/x.txt", "{outside}/x.txt", "out/x.txt",
           "./src/../../outside/x.txt", "link/../../outside/x.txt", "src//..//..//outside/x.txt"]


def test_paths_out_of_the_root_are_refused_in_every_section(make_forge, server, root, tmp_path):
    (root / "src" / "a.py").write_text("a\n")
    spell = [p.format(root=root, outside=tmp_path / "outside") for p in ESCAPES]
    patches = [patch(f"*** Update File: {p}\n@@\n-outside\n+pwned\n") for p in spell]
    patches += [patch(f"*** Add File: {spell[0]}\n+pwned\n"),
                patch(f"*** Delete File: {spell[3]}\n"),
                patch(f"*** Update File: src/a.py\n*** Move to: {spell[2]}\n"),
                patch("*** Add File: work/fine.txt\n+ok\n", f"*** Add File: {spell[4]}\n+pwned\n")]
    _, parts = run_patches(make_forge, server, root, patches)
    for part in parts:
        assert part.state == "error" and part.error.startswith("Permission denied:"), part.error
        assert "outside the root" in part.error
    assert (tmp_path / "outside" / "x.txt").read_text() == "outside\n"
    assert sorted(files_under(tmp_path / "outside")) == ["x.txt"]
    assert not (root / "work" / "fine.txt").exists() and (root / "src" / "a.py").exists()


LOCKED = ["locked/a.txt", "./locked/a.txt", "work/../locked/a.txt", "locked//a.txt",
          "{root}/locked/a.txt", "link/a.txt"]


@pytest.mark.parametrize("rule", ["apply_patch:locked/*=deny", "edit:locked/*=deny",
                                  "write:./locked/=deny"])
def test_a_deny_rule_on_one_path_refuses_the_whole_patch(make_forge, server, root, rule):
    """Rules for apply_patch, and those written for edit or write, hold on every path of the
    patch however it is spelled; the other files of the patch are not written either."""
    patches = [patch("*** Add File: work/new.txt\n+fine\n",
                     f"*** Update File: {p.format(root=root)}\n@@\n-secret\n+pwned\n")
               for p in LOCKED]
    patches.append(patch("*** Update File: work/../locked/a.txt\n*** Move to: work/taken.txt\n"))
    (root / "work" / "b.txt").write_text("b\n")
    patches.append(patch("*** Update File: work/b.txt\n*** Move to: ./link/b.txt\n"))
    _, parts = run_patches(make_forge, server, root, patches,
                           permissions=["apply_patch:*=allow", rule])
    for part in parts:
        assert part.state == "error", part.error
        assert part.error.startswith("Permission denied: apply_patch is not allowed on locked/")
    assert (root / "locked" / "a.txt").read_text() == "secret\n"
    assert sorted(files_under(root)) == ["locked/a.txt", "work/b.txt"]


def test_case_and_lookalike_spellings_are_other_files_on_linux(make_forge, server, root):
    patches = [patch("*** Add File: Locked/a.txt\n+x\n"), patch("*** Add File: l\u043ecked/a\n+x\n")]
    _, parts = run_patches(make_forge, server, root, patches,
                           permissions=["apply_patch:*=allow", "apply_patch:locked/*=deny"])
    assert [p.state for p in parts] == ["completed", "completed"]
    assert (root / "locked" / "a.txt").read_text() == "secret\n"


def test_with_no_rule_the_build_agent_asks_and_no_one_can_answer(make_forge, server, root):
    _, [part] = run_patches(make_forge, server, root, [patch("*** Add File: work/n.txt\n+x\n")],
                            permissions=())
    assert part.error.startswith("Permission denied: apply_patch needs a person's approval")
    assert not (root / "work" / "n.txt").exists()


def test_the_person_is_asked_once_for_the_whole_patch_seeing_every_path(make_forge, server, root):
    (root / "src" / "a.py").write_text("a\n")
    text = patch("*** Add File: ./work/n.txt\n+x\n",
                 "*** Update File: src/a.py\n*** Move to: work/../src/b.py\n")
    server.add(Turn([tool_call("apply_patch", {"input": text})]), Turn.text("done"))
    forge = make_forge(builtin_tools=True, root=str(root), db="duckdb", model="openai/gpt-5")
    asked = []
    forge.on_approval(lambda r: (asked.append((r.tool, r.subject)), "once")[1])
    assert forge.session("s").prompt("change the files").text == "done"
    assert asked == [("apply_patch", "work/n.txt, src/a.py, src/b.py")]
    assert (root / "work" / "n.txt").read_text() == "x\n" and (root / "src" / "b.py").exists()


# ------------------------------------------------------------------ malformed patches

MALFORMED = [
    ("", "The patch is empty"),
    ("   \n", "The patch is empty"),
    ("*** Add File: a.txt\n+x\n*** End Patch", "must start with the line '*** Begin Patch'"),
    ("*** Begin Patch\n*** Add File: a.txt\n+x\n", "must end with the line '*** End Patch'"),
    (patch("*** Create File: a.txt\n+x\n"), "line 2 of the patch, '*** Create File: a.txt', is not"),
    (patch(""), "holds no file operations"),
    (patch("*** Add File: a.txt\nx\n"), "every line of an added file (a.txt) starts with '+'"),
    (patch("*** Update File: a.txt\n"), "has no hunks"),
    (patch("*** Update File: a.txt\n@@\n*x\n"), "found '*x'"),
    (patch("hello\n"), "outside any file section"),
    (patch("*** Delete File: a.txt\n+x\n"), "nothing may follow '*** Delete File: a.txt'"),
    (patch("*** Add File: \n+x\n"), "names no file"),
]


def test_malformed_patches_are_invalid_arguments_with_clear_errors(make_forge, server, root):
    before = files_under(root)
    _, parts = run_patches(make_forge, server, root, [text for text, _ in MALFORMED],
                           permissions=())  # refused before the gate: no one is asked
    for part, (_, message) in zip(parts, MALFORMED, strict=True):
        assert part.state == "error"
        assert part.error.startswith("Invalid arguments for apply_patch: input: "), part.error
        assert message in part.error, part.error
    assert files_under(root) == before


# ------------------------------------------------------------------ the hunk matcher itself


def test_hunks_keep_line_endings_and_a_missing_final_newline():
    [op] = parse(patch("*** Update File: f\n@@\n a\n-b\n+B\n"))
    assert apply_hunks("a\r\nb\r\nc\r\n", op.hunks, "f") == "a\r\nB\r\nc\r\n"
    assert apply_hunks("a\nb", op.hunks, "f") == "a\nB"
    assert apply_hunks("a  \nb\t\n", op.hunks, "f") == "a  \nB\n"  # trailing blanks may differ
    with pytest.raises(PatchError, match="line 3 of the patch"):
        apply_hunks("A\nb\n", op.hunks, "f")


def test_anchors_narrow_step_by_step_and_pure_additions_follow_them():
    text = "class A:\n    def f(self):\n        return 1\nclass B:\n    def f(self):\n        return 1\n"
    [op] = parse(patch("*** Update File: f\n@@ class B:\n@@     def f(self):\n-        return 1\n"
                       "+        return 2\n@@ class A:\n+    x = 0\n"))
    assert len(op.hunks) == 2
    with pytest.raises(PatchError, match="seeks '@@ class A:'"):  # hunks go forward only
        apply_hunks(text, op.hunks, "f")
    [op] = parse(patch("*** Update File: f\n@@ class A:\n+    x = 0\n@@ class B:\n@@ def f(self):\n"
                       "-        return 1\n+        return 2\n"))
    assert apply_hunks(text, op.hunks, "f") == ("class A:\n    x = 0\n    def f(self):\n"
                                                "        return 1\nclass B:\n    def f(self):\n"
                                                "        return 2\n")


def test_the_lean_profile_offers_apply_patch_in_edits_place(make_forge, server, tmp_path):
    server.add(Turn.text("ok"), Turn.text("ok"))
    for model in ("openai/gpt-5", "openai/gpt-4o"):
        make_forge(builtin_tools=True, root=str(tmp_path), model=model,
                   tool_profile="lean").session("s").prompt("hi")
    gpt5, gpt4o = server.requests
    assert sorted(gpt5.tools) == ["apply_patch", "python", "read", "sql", "variables"]
    assert sorted(gpt4o.tools) == ["edit", "python", "read", "sql", "variables"]
