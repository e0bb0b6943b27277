"""A program that is not ours holding the store open: the agent goes on, nothing is lost.

The holders are real DuckDB clients in processes of their own (read-only, as DBeaver or the
CLI's ``-readonly`` open it, and read-write, as ``duckdb FILE`` does); the writers are real
forge processes and a prompt through real litellm against the fake model server.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import duckdb
import pytest

from forge_jupyter.message import SessionInfo
from forge_jupyter.store.duckdb.pending import StoreDiverted
from forge_jupyter.store.duckdb.snapshot import SnapshotRefused, keep_fresh, take_snapshot
from forge_jupyter.store.duckdb.store import DuckDBStore
from forge_jupyter.testing import Turn

WORKER = str(Path(__file__).with_name("store_worker.py"))
pytestmark = pytest.mark.slow


class Holder:
    """A DuckDB client process keeping ``path`` open until told to run one query and quit."""

    def __init__(self, path: Path, *, read_only: bool = True, then: str = "") -> None:
        code = (
            "import duckdb, json, sys\n"
            f"c = duckdb.connect({str(path)!r}, read_only={read_only})\n"
            "print('held', flush=True)\n"
            "sys.stdin.readline()\n"
            "rows = c.execute('SELECT name FROM session ORDER BY name').fetchall()\n"
            f"{then}\n"
            "print(json.dumps([r[0] for r in rows]), flush=True)\n"
            "c.close()\n"
        )
        self.proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None and self.proc.stdout.readline().strip() == "held"

    def let_go(self) -> list[str]:
        """What the holder saw of the sessions, as it let go of the file."""
        out, err = self.proc.communicate("\n", timeout=30)
        assert self.proc.returncode == 0, err
        return json.loads(out.strip().splitlines()[-1])

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def _names_elsewhere(path: Path) -> list[str]:
    """The sessions another DuckDB client finds in the file now."""
    code = (f"import duckdb, json; c = duckdb.connect({str(path)!r}, read_only=True); "
            "print(json.dumps([r[0] for r in c.execute("
            "'SELECT name FROM session ORDER BY name').fetchall()]))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _wait_landed(path: Path, timeout: float = 20.0) -> None:
    pending = path.with_name(path.name + ".pending")
    deadline = time.monotonic() + timeout
    while os.path.lexists(pending) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.lexists(pending), "the pending copy never landed"


def test_a_reader_holding_the_file_does_not_stall_a_prompt_and_its_rows_land_after(
        make_forge, server, tmp_path):
    forge = make_forge(db="duckdb")  # lock_timeout: the default 30 s
    path = Path(forge.store.path)
    server.add(Turn.text("first answer"), Turn.text("second answer, while held"))
    session = forge.session("s")
    session.prompt("one")
    holder = Holder(path)  # a person's DuckDB client, looking at the costs
    try:
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            started = time.monotonic()
            answer = session.prompt("two")
            took = time.monotonic() - started
        assert answer.text == "second answer, while held" and answer.status == "completed"
        assert took < 10, f"the prompt waited {took:.1f} s for the other program"
        notice = " ".join(str(w.message) for w in said if w.category is StoreDiverted)
        assert "held open by another program" in notice and "forge-jupyter snapshot" in notice
        # the kernel reads its own writes meanwhile
        assert [m.text for m in session.messages() if m.role == "assistant"] == [
            "first answer", "second answer, while held"]
        assert holder.let_go() == ["s"]
    finally:
        holder.kill()
    _wait_landed(path)  # nobody writes now: the copy lands by itself
    con = duckdb.connect(str(path), read_only=True)
    try:
        texts = [r[0] for r in con.execute(
            "SELECT p.data ->> '$.text' FROM session_message sm JOIN message m ON m.id = "
            "sm.message_id JOIN part p ON p.message_id = m.id WHERE p.type = 'text' "
            "ORDER BY sm.pos, p.id").fetchall()]
        dupes = con.execute("SELECT count(*) - count(DISTINCT id) FROM part").fetchone()
    finally:
        con.close()
    assert texts == ["one", "first answer", "two", "second answer, while held"]
    assert dupes == (0,)


def test_writes_waiting_beside_the_file_outlive_a_killed_process(tmp_path):
    path = tmp_path / "held.duckdb"
    DuckDBStore(path)
    holder = Holder(path)
    writer = subprocess.Popen([sys.executable, WORKER, "marked", str(path), "20"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        started = json.loads(writer.stdout.readline())
        committed = 0
        while committed < 5:
            committed = int(writer.stdout.readline()) + 1
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait(timeout=10)
        assert holder.let_go() == []  # the reader sees the file as it was, not the writes
    finally:
        holder.kill()
        writer.kill()
    store = DuckDBStore(path)  # the next process lands what the killed one left beside it
    assert not os.path.lexists(path.with_name(path.name + ".pending"))
    markers = {e.data["batch"]: e.data["count"]
               for e in store.events(started["session"], type="marker", limit=1000).items}
    assert len(markers) >= committed
    counts = store.sql("SELECT CAST(json_extract(data, '$.metadata.batch') AS INTEGER) AS b, "
                       "count(*) AS n FROM part GROUP BY ALL")
    assert dict(zip(counts.b, counts.n, strict=True)) == markers  # whole batches, each once


def test_two_forge_processes_share_the_copy_while_the_file_is_held(tmp_path):
    path = tmp_path / "shared.duckdb"
    store = DuckDBStore(path)
    holder = Holder(path)
    try:
        workers = [subprocess.Popen([sys.executable, WORKER, "parts", str(path), "300", "20"],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                   for _ in range(2)]
        reports = []
        for w in workers:
            out, err = w.communicate(timeout=120)
            assert w.returncode == 0, err
            reports.append(json.loads(out))
        assert all(r["max"] < 10 for r in reports), reports  # nobody waited for the holder
    finally:
        holder.kill()
    store.list_sessions()  # this process lands it
    for r in reports:
        texts = sorted((p.text for p in store.list_parts(r["message"])), key=lambda t: int(t[1:]))
        assert texts == [f"#{i}" for i in range(300)]
    assert int(store.sql("SELECT count(*) AS n FROM part").n[0]) == 600


def test_what_the_other_program_wrote_meanwhile_is_kept_beside_the_file(tmp_path):
    path = tmp_path / "held.duckdb"
    store = DuckDBStore(path)
    store.create_session(SessionInfo(name="before"))
    holder = Holder(path, read_only=False,
                    then="c.execute('CREATE TABLE my_notes AS SELECT 42 AS answer')")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", StoreDiverted)
            store.create_session(SessionInfo(name="during"))
        assert holder.let_go() == ["before"]
    finally:
        holder.kill()
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        assert sorted(s.name for s in store.list_sessions().items) == ["before", "during"]
    kept = [p for p in tmp_path.iterdir() if ".changed-" in p.name]
    assert len(kept) == 1 and kept[0].name in " ".join(str(w.message) for w in said)
    assert duckdb.connect(str(kept[0]), read_only=True).execute(
        "SELECT answer FROM my_notes").fetchall() == [(42,)]


@pytest.mark.parametrize("spoil", ["garbage", "symlink", "folder"])
def test_a_pending_copy_that_is_not_a_store_of_ours_is_set_aside_not_landed(tmp_path, spoil):
    path = tmp_path / "s.duckdb"
    DuckDBStore(path).create_session(SessionInfo(name="mine"))
    pending = path.with_name(path.name + ".pending")
    precious = tmp_path / "precious.txt"
    precious.write_text("the person's file")
    if spoil == "garbage":
        pending.write_bytes(b"not a database at all" * 100)
    elif spoil == "symlink":
        pending.symlink_to(precious)
    else:
        pending.mkdir()
    from forge_jupyter.store.duckdb import file as duckdb_file

    duckdb_file._files.clear()  # a process that starts now, finding the copy beside the file
    store = DuckDBStore(path)
    assert [s.name for s in store.list_sessions().items] == ["mine"]
    assert precious.read_text() == "the person's file"
    assert not os.path.lexists(pending)
    assert [p for p in tmp_path.iterdir() if "pending-unusable" in p.name]


@pytest.mark.parametrize("planted", ["link at the copy's way in", "link at its note",
                                     "link at its log", "pipe at its note"])
def test_what_is_planted_beside_the_file_is_never_written_through_or_waited_on(tmp_path,
                                                                             planted):
    # the store's folder may be a cloned project's .forge/: its names beside the file are not ours
    path = tmp_path / "s.duckdb"
    store = DuckDBStore(path)
    store.create_session(SessionInfo(name="before"))
    precious = tmp_path / "precious.txt"
    precious.write_text("the person's file")
    name = {"link at the copy's way in": ".pending.tmp", "link at its note": ".pending.json",
            "link at its log": ".pending.wal", "pipe at its note": ".pending.json"}[planted]
    spot = path.with_name(path.name + name)
    if planted.startswith("pipe"):
        os.mkfifo(spot)
    else:
        spot.symlink_to(precious)
    holder = Holder(path)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", StoreDiverted)
            store.create_session(SessionInfo(name="during"))
        holder.let_go()
    finally:
        holder.kill()
    _wait_landed(path)
    assert precious.read_text() == "the person's file"
    assert _names_elsewhere(path) == ["before", "during"]


def test_a_snapshot_is_read_without_holding_the_store_and_holds_the_waiting_writes(tmp_path):
    path = tmp_path / "s.duckdb"
    store = DuckDBStore(path)
    store.create_session(SessionInfo(name="before"))
    holder = Holder(path)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", StoreDiverted)
            store.create_session(SessionInfo(name="during"))
        out = tmp_path / "look.duckdb"
        done = subprocess.run([sys.executable, "-m", "forge_jupyter", "snapshot", str(out),
                               "--db", str(path)], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert _names_elsewhere(out) == ["before", "during"]  # the writes still waiting, too
    finally:
        holder.kill()
    # a reader that polls the snapshot never meets forge's lock, however busy forge is
    look = duckdb.connect(str(out), read_only=True)
    for i in range(30):
        store.create_session(SessionInfo(name=f"busy-{i}"))
        assert look.execute("SELECT count(*) FROM session").fetchone() == (2,)
    look.close()
    for bad in (path, path.with_name(path.name + ".lock"), tmp_path):
        with pytest.raises(SnapshotRefused):
            take_snapshot(path, bad)
    refused = subprocess.run([sys.executable, "-m", "forge_jupyter", "snapshot", str(path),
                              "--db", str(path)], capture_output=True, text=True, timeout=60)
    assert refused.returncode == 1 and "the store itself" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_a_snapshot_kept_fresh_is_copied_again_only_when_the_store_changed(tmp_path):
    path = tmp_path / "s.duckdb"
    store = DuckDBStore(path)
    out = tmp_path / "look.duckdb"
    said: list[str] = []
    keep_fresh(path, out, 0.01, rounds=3, said=said.append)
    assert len(said) == 1  # nothing changed between the rounds
    store.create_session(SessionInfo(name="later"))
    keep_fresh(path, out, 0.01, rounds=2, said=said.append)
    assert len(said) == 2 and _names_elsewhere(out) == ["later"]
