"""Permission rules of file tools match the path normalized under the root, through the real
prompt path: the fake model server scripts write/edit calls, real litellm, a real DuckDB file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from forge_jupyter.errors import ToolError
from forge_jupyter.testing import Turn, tool_call
from forge_jupyter.tools.paths import locate
from forge_jupyter.tools.permission import PathSubject, Permissions, Rule, path_pattern

LOOKALIKE = "l\u043ecked"  # a Cyrillic "о": another name, another folder


@pytest.fixture
def root(tmp_path) -> Path:
    root = tmp_path / "root"
    for folder in ("locked", "data", "work"):
        (root / folder).mkdir(parents=True)
    (root / "locked" / "a.txt").write_text("secret\n")
    (root / "notebook.ipynb").write_text("{}\n")
    (root / "link").symlink_to(root / "locked")
    (tmp_path / "outside").mkdir()
    return root


def run_calls(make_forge, server, root: Path, calls: list[tuple[str, dict]], **forge_kw):
    """One prompt whose model calls every tool in ``calls`` (in parallel); their tool parts."""
    server.add(Turn([tool_call(name, args) for name, args in calls]), Turn.text("done"))
    forge_kw.setdefault("db", "duckdb")
    forge = make_forge(builtin_tools=True, root=str(root), **forge_kw)
    answer = forge.session("s").prompt("change the files")
    assert answer.text == "done"
    parts = forge.session("s").messages()[1].tool_parts
    assert [p.tool for p in parts] == [name for name, _ in calls]
    return forge, parts


def files_under(path: Path) -> list[str]:
    return sorted(p.relative_to(path).as_posix() for p in path.rglob("*"))


DENIED_SPELLINGS = ["./locked/a", "work/../locked/b", "locked//c", "{root}/locked/d", "locked/./e",
                    "link/f", "./work/./../link//g", "{root}/work/../locked/h"]


def test_every_spelling_of_a_denied_folder_is_denied_and_nothing_is_written(make_forge, server, root):
    paths = [p.format(root=root) for p in DENIED_SPELLINGS]
    allowed = ["work/ok.txt", "./work//ok2.txt", "Locked/x", f"{LOOKALIKE}/y"]
    calls = [("write", {"path": p, "content": "pwned\n"}) for p in paths + allowed]
    forge, parts = run_calls(make_forge, server, root, calls,
                             permissions=["write:*=allow", "write:locked/*=deny"])
    for part, path in zip(parts[:len(paths)], paths, strict=True):
        assert part.state == "error", path
        assert part.error.startswith("Permission denied: write is not allowed on locked/"), part.error
        assert "rule write(locked/*) → deny" in part.error
    assert files_under(root / "locked") == ["a.txt"]
    assert (root / "locked" / "a.txt").read_text() == "secret\n"
    # what is allowed still works; on this case-sensitive file system Locked/ is another folder,
    # and a look-alike name is another name (no Unicode folding)
    assert [p.state for p in parts[len(paths):]] == ["completed"] * 4
    assert (root / "work" / "ok.txt").read_text() == "pwned\n"
    assert (root / "Locked" / "x").exists() and (root / LOOKALIKE / "y").exists()
    events = [e for e in forge.store.events(parts[0].session_id).items if e.type == "permission.denied"]
    assert sorted(e.data["subject"] for e in events) == sorted(
        ["locked/a", "locked/b", "locked/c", "locked/d", "locked/e", "locked/f", "locked/g", "locked/h"])


def test_edit_through_any_spelling_of_a_denied_file_is_denied(make_forge, server, root):
    spellings = ["./locked/a.txt", "locked//a.txt", "link/a.txt", f"{root}/locked/a.txt",
                 "data/../locked/./a.txt"]
    calls = [("edit", {"path": p, "old_string": "secret", "new_string": "public"}) for p in spellings]
    _, parts = run_calls(make_forge, server, root, calls,
                         permissions=["edit:*=allow", "edit:./locked/**=deny"])
    assert all(p.state == "error" and "not allowed on locked/a.txt" in p.error for p in parts)
    assert (root / "locked" / "a.txt").read_text() == "secret\n"


def test_an_allowed_folder_does_not_let_dotdot_out_of_it(make_forge, server, root):
    calls = [("write", {"path": "data/../notebook.ipynb", "content": "overwritten"}),
             ("write", {"path": "data/./../data/../notebook.ipynb", "content": "overwritten"}),
             ("write", {"path": "data/new.csv", "content": "a,b\n"}),
             ("write", {"path": "data//sub/../more.csv", "content": "c\n"})]
    _, parts = run_calls(make_forge, server, root, calls, permissions=["write:data/*=allow"])
    for part in parts[:2]:  # notebook.ipynb is not under data/: the build agent asks, no one answers
        assert part.state == "error" and part.error.startswith("Permission denied: write needs a person's approval")
    assert (root / "notebook.ipynb").read_text() == "{}\n"
    assert [p.state for p in parts[2:]] == ["completed", "completed"]
    assert (root / "data" / "new.csv").read_text() == "a,b\n" and (root / "data" / "more.csv").exists()


@pytest.mark.parametrize("rule", ["locked/*", "./locked/*", "locked/**", "locked/", "{root}/locked/*",
                                  "{root}//locked/./*", ".//locked/*"])
def test_a_rule_may_spell_its_path_as_a_path(make_forge, server, root, rule):
    calls = [("write", {"path": "locked/new", "content": "x"}), ("write", {"path": "work/new", "content": "x"})]
    _, parts = run_calls(make_forge, server, root, calls,
                         permissions=["write:*=allow", f"write:{rule.format(root=root)}=deny"])
    assert parts[0].state == "error" and "Permission denied" in parts[0].error
    assert parts[1].state == "completed"
    assert not (root / "locked" / "new").exists()


def test_a_path_that_cannot_be_normalized_is_refused_before_any_rule(make_forge, server, root, tmp_path):
    cases = {"a\x00b": "NUL byte", "../outside/x": "outside the root directory",
             str(tmp_path / "outside" / "y"): "outside the root directory",
             "w/" + "n" * 300: "too long to be a path", "x/" * 2100: "too long to be a path",
             "locked/": "names a directory", "work/": "names a directory"}
    calls = [("write", {"path": p, "content": "x"}) for p in cases]
    forge, parts = run_calls(make_forge, server, root, calls, permissions=["write:*=allow"])
    for part, why in zip(parts, cases.values(), strict=True):
        assert part.state == "error" and part.error.startswith("Permission denied: "), part.error
        assert why in part.error, part.error
    assert files_under(tmp_path / "outside") == []
    assert files_under(root / "work") == [] and files_under(root / "locked") == ["a.txt"]
    denied = [e for e in forge.store.events(parts[0].session_id).items if e.type == "permission.denied"]
    assert len(denied) == len(cases)


# ------------------------------------------------------------------ the store's own files

def test_the_stores_files_are_never_written_however_spelled(make_forge, server, root):
    db = root / "forge.duckdb"
    (root / "db-link").symlink_to(db)
    (root / "wal-link").symlink_to(root / "forge.duckdb.wal")  # dangling: no WAL yet
    spellings = ["forge.duckdb", "./forge.duckdb.wal", "forge.duckdb.lock", "work/../forge.duckdb",
                 f"{root}//forge.duckdb", "db-link", "wal-link", "hard-link"]
    calls = [("write", {"path": p, "content": "garbage"}) for p in spellings]
    calls.append(("edit", {"path": "forge.duckdb.wal", "old_string": "", "new_string": "garbage"}))
    server.add(Turn.text("first"))
    forge = make_forge(db=str(db), builtin_tools=True, root=str(root),
                       permissions=["write:*=allow", "edit:*=allow"])
    forge.session("s").prompt("open the store")
    os.link(db, root / "hard-link")  # another name for the database's own inode
    server.add(Turn([tool_call(name, args) for name, args in calls]), Turn.text("done"))
    assert forge.session("s").prompt("break the store").text == "done"
    parts = forge.session("s").messages()[3].tool_parts
    for part, (_, args) in zip(parts, calls, strict=True):
        assert part.state == "error", args
        assert "of this Forge's store" in part.error and "could corrupt every session's history" in part.error
    assert "is the database" in parts[0].error and "is the write-ahead log" in parts[1].error
    assert "is the lock file" in parts[2].error
    assert not (root / "forge.duckdb.wal").exists()
    assert db.stat().st_ino == (root / "hard-link").stat().st_ino  # neither name was replaced
    forge.close()
    reopened = make_forge(db=str(db))  # the file still opens, with the whole history
    assert [m.text for m in reopened.session("s").messages() if m.role == "assistant"] == ["first", "", "done"]


def test_a_memory_store_owns_no_files(make_forge, server, root):
    _, parts = run_calls(make_forge, server, root, [("write", {"path": "forge.duckdb", "content": "x"})],
                         db=":memory:", permissions=["write:*=allow"])
    assert parts[0].state == "completed"


# ------------------------------------------------------------------ matching, without the loop

def test_path_subjects_match_normalized_patterns(tmp_path):
    root = str(tmp_path)
    p = Permissions([("agent", [Rule("write", "*", "allow"), Rule("write", "./locked//*", "deny"),
                                Rule("read", f"{root}/out/", "deny")])])
    assert p.evaluate("write", PathSubject("locked/a", root)).action == "deny"
    assert p.evaluate("write", PathSubject("Locked/a", root)).action == "allow"
    assert p.evaluate("write", PathSubject("Locked/a", root, fold_case=True)).action == "deny"
    assert p.evaluate("read", PathSubject("out/x", root)).action == "deny"
    # a plain string subject (python code, SQL) is matched raw, as before
    assert p.evaluate("write", "./locked//x").action == "deny"
    assert p.evaluate("write", "locked/x").action == "allow"
    assert path_pattern("/" + root.lstrip("/") + "/a/*", root) == "a/*"
    assert Permissions([("agent", [Rule("write", "**", "deny")])]).denied_for_all("write")


@pytest.mark.parametrize("path", ["\udcff", "a\ud800b"])
def test_a_name_that_is_not_encodable_is_refused(tmp_path, path):
    with pytest.raises(ToolError, match="not a usable file name"):
        locate(tmp_path, path)
