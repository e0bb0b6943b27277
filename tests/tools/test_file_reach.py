"""What the model's file tools may open (issue 24, classes 3 and 7), through real prompts.

The fake model server sends the calls through real litellm; the store is a real DuckDB file
inside the session's root, shared with another tenant. What is checked is what the model
would read back (the tool parts) and that every prompt returns: a FIFO, a socket or
``/dev/zero`` never makes a tool wait, and no spelling reaches the store's bytes or another
session's saved outputs.
"""

from __future__ import annotations

import os
import re
import socket
import tempfile
from pathlib import Path

import pytest

from forge_jupyter.store.query import sandbox
from forge_jupyter.testing import Turn, tool_call
from forge_jupyter.tools import reach

BOB_SECRET = "bob-private-prompt-7f3a"  # in the store only as another tenant's prompt
BOB_OUTPUT = "bob-saved-output-91c2"  # in another session's saved outputs only


def run(forge, sid: str, calls: list[tuple[str, dict]], server) -> list:
    server.add(Turn([tool_call(name, args) for name, args in calls]), Turn.text("done"))
    assert forge.session(sid).prompt("look around").text == "done"
    parts = forge.session(sid).messages()[-2].tool_parts
    assert [p.tool for p in parts] == [name for name, _ in calls]
    return parts


def seen(part) -> str:
    return f"{part.output or ''}\n{part.error or ''}"


# ------------------------------------------------------------------ not regular files


@pytest.fixture
def odd_root(tmp_path) -> Path:
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "data.csv").write_text("a,b\n1,2\n")
    (root / "sub" / "more.csv").write_text("a,b\n3,4\n")
    (root / "notes.txt").write_text("needle here\n")
    os.mkfifo(root / "pipe.csv")  # opening it waits for a writer, forever
    os.mkfifo(root / "sub" / "deep.txt")
    os.symlink("/dev/zero", root / "zero.csv")  # never ends
    os.symlink(root / "pipe.csv", root / "alias.csv")  # a link inside the root to the FIFO
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(root / "sock.txt"))
    yield root
    sock.close()


@pytest.mark.timeout(120)
def test_fifos_sockets_and_devices_are_refused_by_sql_and_nothing_waits(make_forge, server,
                                                                       odd_root):
    queries = ["SELECT * FROM read_csv('pipe.csv')", "SELECT * FROM read_text('./sub/../pipe.csv')",
               "SELECT * FROM 'alias.csv'", "SELECT * FROM read_blob('zero.csv')",
               "SELECT * FROM read_text('sock.txt')", "SELECT * FROM read_json('sub/deep.txt')",
               "SELECT * FROM read_parquet('pipe.csv')",
               "SELECT count(*) AS n FROM read_csv('*.csv')",
               "SELECT count(*) AS n FROM read_csv('**/*.csv')",
               f"SELECT replace(file, '{odd_root}/', '') AS f FROM glob('**') ORDER BY f"]
    forge = make_forge(builtin_tools=True, root=odd_root)
    parts = run(forge, "s", [("sql", {"query": q}) for q in queries], server)
    for part in parts[:7]:
        assert part.state == "error", part.input
    assert "pipe.csv is a FIFO (named pipe)" in parts[0].error
    assert "regular files only" in parts[0].error and "pipe.csv is a FIFO" in parts[1].error
    assert "alias.csv" not in parts[2].error or "FIFO" in parts[2].error
    assert "outside the root" in parts[3].error  # /dev/zero is reached through a link out
    assert "sock.txt is a socket" in parts[4].error
    assert "sub/deep.txt is a FIFO" in parts[5].error
    one, both, listed = parts[7:]
    assert one.state == "completed" and "1" in one.output  # data.csv alone
    assert both.state == "completed" and "2" in both.output  # and sub/more.csv
    assert listed.state == "completed"
    assert listed.output.split() == ["f", "data.csv", "notes.txt", "sub/more.csv", "(3", "rows)"]


@pytest.mark.timeout(120)
def test_walks_skip_what_is_not_a_regular_file_and_the_next_prompt_runs(make_forge, server,
                                                                        odd_root):
    greps = [("grep", {"pattern": p}) for p in ("needle", "x", "a", "b", ".", "zzz")]  # six
    calls = [*greps, ("glob", {"pattern": "**"}), ("list", {}), ("list", {"path": "sub"}),
             ("grep", {"pattern": "a", "path": "pipe.csv"}),
             ("grep", {"pattern": "a", "path": "sub/deep.txt"}),
             ("grep", {"pattern": "a", "path": "zero.csv"}),
             ("read", {"path": "pipe.csv"}), ("read", {"path": "alias.csv"}),
             ("read", {"path": "sock.txt"}), ("read", {"path": "zero.csv"})]
    forge = make_forge(builtin_tools=True, root=odd_root)
    parts = run(forge, "s", calls, server)
    assert parts[0].state == "completed" and parts[0].output.splitlines() == [
        "1 match in 1 file", "notes.txt:1: needle here"]
    for part in parts[:6]:
        assert part.state == "completed"
        assert not any(n in part.output for n in ("pipe.csv", "deep.txt", "sock.txt", "zero.csv"))
    globbed = parts[6].output.splitlines()
    assert sorted(globbed) == ["data.csv", "notes.txt", "sub/more.csv"]
    top = parts[7].output.splitlines()
    assert top[0] == ("./ — 1 directory, 3 files; 3 entries left out that file tools never open "
                      "(FIFOs, sockets, devices, the store's files, other sessions' outputs)")
    assert top[1:] == ["sub/", "data.csv", "notes.txt", "zero.csv -> /dev/zero"]
    assert parts[8].output.splitlines()[1:] == ["more.csv"]
    for part, why in zip(parts[9:], ["pipe.csv is a FIFO", "sub/deep.txt is a FIFO",
                                     "outside the root", "pipe.csv is a FIFO",
                                     "pipe.csv is a FIFO", "sock.txt is a socket",
                                     "outside the root"], strict=True):
        assert part.state == "error" and why in part.error, (part.input, part.error)
    # the kernel's next prompt runs: nothing is left waiting on a FIFO
    server.add(Turn.text("still here"))
    assert forge.session("s").prompt("and now?").text == "still here"


# ------------------------------------------------------------------ the store and other sessions


@pytest.fixture
def shared(make_forge, server, tmp_path):
    """A root holding the store (as ``Forge(db="history.duckdb")`` makes it), where another
    tenant (bob) has a session with a private prompt and a saved output; alice's Forge."""
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "data.csv").write_text("a,b\n1,2\n")
    db = root / "history.duckdb"
    bob = make_forge(db=str(db), tenant="bob", builtin_tools=True, root=root)
    server.add(Turn.text("noted"))
    bob.session("b1").prompt(f"remember {BOB_SECRET}")
    saved = Path(bob.output_dir(bob.session("b1").id))
    saved.mkdir(parents=True)
    (saved / "prt_1.txt").write_text(f"{BOB_OUTPUT}\n")
    alice = make_forge(db=str(db), tenant="alice", builtin_tools=True, root=root,
                       permissions=["write:*=allow", "edit:*=allow"])
    own = Path(alice.output_dir(alice.session("a1").id))
    own.mkdir(parents=True)
    (own / "prt_2.txt").write_text("alice's own output\n")
    os.symlink(db, root / "backup.bin")
    os.link(db, root / "hard.bin")  # the database's own inode under another name
    os.symlink(saved, root / "theirs")
    assert saved.is_relative_to(root) and own.is_relative_to(root)
    return root, alice, saved.relative_to(root).as_posix(), own.relative_to(root).as_posix()


def _never_leaks(parts) -> None:
    for part in parts:
        text = seen(part)
        assert BOB_SECRET not in text and BOB_OUTPUT not in text, (part.input, text[:300])
        assert "DUCK" not in text.replace("'DUCK'", "")  # the database file's magic bytes


@pytest.mark.timeout(120)
def test_sql_never_reads_the_store_or_another_sessions_outputs_however_spelled(shared, server):
    root, alice, theirs, mine = shared
    queries = ["SELECT * FROM read_blob('history.duckdb')",
               "SELECT * FROM read_blob('./history.duckdb')",
               "SELECT * FROM read_text('sub/../history.duckdb')",
               f"SELECT * FROM read_blob('{root}//history.duckdb')",
               "SELECT * FROM read_text('history.duckdb.lock')",
               "SELECT * FROM read_duckdb('history.duckdb', table_name := 'part')",
               "SELECT * FROM read_blob('backup.bin')",  # a symbolic link to it
               "SELECT * FROM read_blob('hard.bin')",  # a hard link to it
               "SELECT * FROM 'history.duckdb'",
               f"SELECT * FROM read_text('{theirs}/prt_1.txt')",
               "SELECT * FROM read_text('theirs/prt_1.txt')",
               "SELECT * FROM read_blob('*.duckdb')",
               "SELECT * FROM read_blob('history.duckdb*')",
               "SELECT * FROM read_text('outputs/*/*.txt')",
               "SELECT * FROM read_blob(concat('history', '.duckdb'))",  # not a literal
               f"SELECT replace(file, '{root}/', '') AS f FROM glob('**') ORDER BY f",
               "SELECT * FROM read_csv('/etc/*')",
               "SELECT * FROM glob('/etc/*')",
               "SELECT * FROM read_text('../*')",
               "SELECT * FROM read_text('etc/*')",  # through a link to /etc
               "SELECT * FROM read_text('etc/passwd')"]
    os.symlink("/etc", root / "etc")
    parts = run(alice, "a1", [("sql", {"query": q}) for q in queries], server)
    _never_leaks(parts)
    by_query = dict(zip(queries, parts, strict=True))
    for q in queries[:11]:
        assert by_query[q].state == "error", q
        assert "of this Forge's store" in by_query[q].error or \
            "another session's saved outputs" in by_query[q].error, (q, by_query[q].error)
    assert "the database of this Forge's store" in parts[0].error
    assert "history tool" in parts[0].error
    assert "the lock file of this Forge's store" in parts[4].error
    assert "the database" in parts[7].error  # the hard link, by its inode
    for q in queries[11:13]:
        assert by_query[q].state == "error" and "No file under the session's root matches" in \
            by_query[q].error, q
    assert "alice's own output" in parts[13].output and "(1 row)" in parts[13].output
    assert "reads only the files named as 'quoted' paths" in parts[14].error
    listed = parts[15]
    assert listed.state == "completed"
    # alice's own output stays readable
    assert listed.output.split() == ["f", "data.csv", f"{mine}/prt_2.txt", "(2", "rows)"]
    for query, part in zip(queries[16:], parts[16:], strict=True):
        # nothing outside the root is listed or named, but what the query itself wrote
        assert part.state == "error"
        own = re.search(r"'([^']*)'", query).group(1)
        text = part.error.replace(repr(own), "")
        assert "PackageKit" not in text and "passwd" not in text and "hostname" not in text
        assert "/etc/" not in text, text
    assert "starts outside the session's root" in parts[16].error
    assert "symbolic link to a place outside the root" in parts[-1].error


@pytest.mark.timeout(120)
def test_read_grep_glob_and_list_refuse_the_store_and_other_sessions_outputs(shared, server):
    root, alice, theirs, mine = shared
    calls = [("read", {"path": "history.duckdb"}), ("read", {"path": "./sub/../history.duckdb"}),
             ("read", {"path": "backup.bin"}), ("read", {"path": "hard.bin"}),
             ("read", {"path": "history.duckdb.lock"}),
             ("read", {"path": f"{theirs}/prt_1.txt"}), ("read", {"path": "theirs/prt_1.txt"}),
             ("grep", {"pattern": "bob"}), ("grep", {"pattern": "DUCK"}),
             ("grep", {"pattern": ".", "path": "hard.bin"}),
             ("grep", {"pattern": ".", "path": theirs}),
             ("grep", {"pattern": "output", "path": "outputs"}),
             ("glob", {"pattern": "**"}), ("glob", {"pattern": "*.duckdb*"}),
             ("list", {}), ("list", {"path": "outputs"}), ("list", {"path": theirs}),
             ("read", {"path": f"{mine}/prt_2.txt"})]
    parts = run(alice, "a1", calls, server)
    _never_leaks(parts)
    for part in parts[:7]:
        assert part.state == "error", part.input
    assert "history.duckdb is the database of this Forge's store" in parts[0].error
    assert "is the database" in parts[3].error and "is the lock file" in parts[4].error
    assert "another session's saved outputs" in parts[5].error
    assert parts[7].output.startswith("No matches") and parts[8].output.startswith("No matches")
    assert "hard.bin is the database" in parts[9].error
    assert "another session's saved outputs" in parts[10].error
    assert parts[11].output.splitlines() == ["1 match in 1 file",
                                             f"{mine}/prt_2.txt:1: alice's own output"]
    assert sorted(parts[12].output.splitlines()) == ["data.csv", f"{mine}/prt_2.txt"]
    assert parts[13].output.startswith("No files match")
    top = parts[14].output.splitlines()
    assert top[1:] == ["outputs/", "sub/", "data.csv"]
    assert "entries left out" in top[0]
    assert parts[15].output.splitlines()[1:] == [mine.split("/")[-1] + "/"]
    assert parts[16].state == "error" and "another session's saved outputs" in parts[16].error
    assert parts[17].state == "completed" and "alice's own output" in parts[17].output


@pytest.mark.timeout(120)
def test_write_and_edit_refuse_other_sessions_outputs_like_the_store(shared, server):
    root, alice, theirs, mine = shared
    calls = [("write", {"path": f"{theirs}/prt_1.txt", "content": "x"}),
             ("write", {"path": f"{theirs}/new.txt", "content": "x"}),
             ("edit", {"path": "theirs/prt_1.txt", "old_string": "bob", "new_string": "eve"}),
             ("write", {"path": "history.duckdb.tmp/spill.bin", "content": "x"})]
    parts = run(alice, "a1", calls, server)
    for part in parts[:3]:
        assert part.state == "error" and "another session's saved outputs" in part.error, part.error
    assert parts[3].state == "error" and "a working file of this Forge's store" in parts[3].error
    assert (root / theirs / "prt_1.txt").read_text() == f"{BOB_OUTPUT}\n"
    assert not (root / theirs / "new.txt").exists()


@pytest.mark.timeout(120)
def test_the_private_copies_of_a_tenants_rows_are_out_of_reach(make_forge, server, tmp_path,
                                                               monkeypatch):
    # the root holds the temporary folder, where forge.sql copies a tenant's rows to Parquet
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    db = tmp_path / "store" / "forge.duckdb"
    bob = make_forge(db=str(db), tenant="bob")
    server.add(Turn.text("noted"))
    bob.session("b1").prompt(f"remember {BOB_SECRET}")
    assert int(bob.sql("SELECT count(*) AS n FROM part")["n"][0]) > 0  # copied out, as Parquet
    [copy] = [p.relative_to(tmp_path).as_posix() for p in (tmp_path / "tmp").glob("forge-sql-*/part.parquet")]
    alice = make_forge(db=str(db), tenant="alice", builtin_tools=True, root=tmp_path)
    calls = [("sql", {"query": f"SELECT * FROM read_parquet('{copy}')"}),
             ("sql", {"query": "SELECT * FROM read_parquet('tmp/forge-sql-*/*.parquet')"}),
             ("sql", {"query": "SELECT * FROM read_parquet('**/part.parquet')"}),
             ("read", {"path": copy}), ("grep", {"pattern": "b", "path": copy}),
             ("glob", {"pattern": "**/*.parquet"})]
    parts = run(alice, "a1", calls, server)
    _never_leaks(parts)
    for part in (parts[0], parts[3], parts[4]):
        assert part.state == "error" and "a private copy of a tenant's history" in part.error
    for part in parts[1:3]:
        assert part.state == "error" and "No file under the session's root matches" in part.error
    assert parts[5].output.startswith("No files match")
    assert reach.COPIES == sandbox.PREFIX  # the folders fenced are the ones the sandbox makes


@pytest.mark.timeout(120)
def test_without_a_store_file_other_sessions_outputs_are_still_out_of_reach(make_forge, server,
                                                                            tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    forge = make_forge(db=":memory:", builtin_tools=True, root=root, output_root=root / "saved")
    first = forge.session("first")
    theirs = Path(forge.output_dir(first.id))
    theirs.mkdir(parents=True)
    (theirs / "prt_1.txt").write_text(f"{BOB_OUTPUT}\n")
    rel = theirs.relative_to(root).as_posix()
    calls = [("read", {"path": f"{rel}/prt_1.txt"}), ("read", {"path": f"{theirs}/prt_1.txt"}),
             ("grep", {"pattern": "bob"}), ("grep", {"pattern": "bob", "path": "saved"}),
             ("glob", {"pattern": "saved/**"}), ("list", {"path": "saved"}),
             ("sql", {"query": f"SELECT * FROM read_text('{rel}/prt_1.txt')"}),
             ("sql", {"query": "SELECT * FROM read_text('saved/*/*')"})]
    parts = run(forge, "second", calls, server)
    _never_leaks(parts)
    for i in (0, 1, 6):
        assert parts[i].state == "error" and "another session's saved outputs" in parts[i].error
    assert parts[2].output.startswith("No matches") and parts[3].output.startswith("No matches")
    assert parts[4].output.startswith("No files match")
    assert parts[5].output.splitlines() == [
        "saved/ — 0 directories, 0 files; 1 entry left out that file tools never open (FIFOs, "
        "sockets, devices, the store's files, other sessions' outputs)", "(empty)"]
    assert "No file under the session's root matches" in parts[7].error
