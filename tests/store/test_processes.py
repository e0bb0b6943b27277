"""Several processes, one DuckDB file: queueing, crashes, and programs that are not ours."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import duckdb
import pytest

from forge_jupyter.errors import StoreLocked
from forge_jupyter.message import Message, SessionInfo, TextPart
from forge_jupyter.session.recovery import recover
from forge_jupyter.store.duckdb.store import DuckDBStore
from forge_jupyter.store.ops import AppendMessage, PutMessage, PutPart

WORKER = str(Path(__file__).with_name("store_worker.py"))
pytestmark = pytest.mark.slow


def _worker(*args: object) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, WORKER, *map(str, args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _hold_raw(path: Path, seconds: float) -> subprocess.Popen:
    """A program that is not ours: a plain DuckDB connection kept open for a while."""
    code = (f"import duckdb, time; c = duckdb.connect({str(path)!r}); "
            f"print('held', flush=True); time.sleep({seconds}); c.close()")
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)


def _count_parts(store: DuckDBStore, message_id: str) -> int:
    return int(store.sql("SELECT count(*) AS n FROM part WHERE message_id = ?", [message_id]).n[0])


def test_four_processes_writing_at_once_lose_nothing_and_see_no_lock_error(tmp_path):
    path = tmp_path / "shared.duckdb"
    store = DuckDBStore(path)
    workers = [_worker("parts", path, 2000, 25) for _ in range(4)]
    reports = []
    for w in workers:
        out, err = w.communicate(timeout=120)
        assert w.returncode == 0, err
        reports.append(json.loads(out))
    assert sum(_count_parts(store, r["message"]) for r in reports) == 8000
    assert int(store.sql("SELECT count(*) AS n FROM part").n[0]) == 8000
    for r in reports:
        texts = [p.text for p in store.list_parts(r["message"])]
        assert sorted(texts, key=lambda t: int(t[1:])) == [f"#{i}" for i in range(2000)]


def test_a_process_killed_mid_write_leaves_only_whole_batches(tmp_path):
    path = tmp_path / "crash.duckdb"
    DuckDBStore(path)
    writer = _worker("marked", path, 25)
    started = json.loads(writer.stdout.readline())
    committed = 0
    deadline = time.monotonic() + 30
    target = random.randint(8, 20)
    while committed < target and time.monotonic() < deadline:
        committed = int(writer.stdout.readline()) + 1
    time.sleep(random.uniform(0, 0.02))  # somewhere inside the next batch (or its commit)
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait(timeout=10)

    store = DuckDBStore(path)
    markers = {e.data["batch"]: e.data["count"] for e in store.events(type="marker", limit=1000).items}
    counts = store.sql(
        "SELECT CAST(json_extract(data, '$.metadata.batch') AS INTEGER) AS batch, count(*) AS n "
        "FROM part GROUP BY ALL ORDER BY batch"
    )
    found = dict(zip(counts.batch, counts.n, strict=True))
    assert len(markers) >= committed
    assert found == markers  # every committed batch whole, no half-applied one

    closed = recover(store, started["session"])
    assert [m.id for m in closed] == [started["message"]]
    assert store.get_message(started["message"]).status == "interrupted"
    assert store.unfinished_messages(started["session"]) == []


def test_a_file_held_briefly_by_another_program_is_waited_for(tmp_path):
    path = tmp_path / "held.duckdb"
    store = DuckDBStore(path, lock_timeout=15)
    holder = _hold_raw(path, 0.2)  # a reader that connects, queries and closes
    assert holder.stdout.readline().strip() == "held"
    session = store.create_session(SessionInfo(name="after-the-wait"))
    holder.wait(timeout=10)
    assert store.find_session("after-the-wait").id == session.id
    assert not os.path.lexists(path.with_name(path.name + ".pending"))  # no copy was needed


def test_a_held_file_whose_copy_cannot_be_made_raises_store_locked(tmp_path):
    # a file held longer goes on in a copy beside it (test_foreign_readers.py); where that copy
    # cannot be written, the person is told who holds the file and what to do
    path = tmp_path / "held.duckdb"
    store = DuckDBStore(path, lock_timeout=0.5)
    path.with_name(path.name + ".pending.tmp").mkdir()  # the copy's way in, blocked
    holder = _hold_raw(path, 4.0)
    try:
        assert holder.stdout.readline().strip() == "held"
        t = time.perf_counter()
        with pytest.raises(StoreLocked) as caught:
            store.create_session(SessionInfo())
        assert 0.4 < time.perf_counter() - t < 3
        message = str(caught.value)
        assert str(path) in message and "close that program's connection" in message.lower()
        assert "could not be made" in message
    finally:
        holder.kill()
        holder.wait()
    store.create_session(SessionInfo())  # and it recovers once the program lets go


def test_a_forge_process_holding_the_file_too_long_raises_store_locked(tmp_path):
    path = tmp_path / "held.duckdb"
    store = DuckDBStore(path, lock_timeout=0.4)
    holder = _worker("hold", path, 3)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(StoreLocked) as caught:
            store.list_sessions()
        assert f"pid {holder.pid}" in str(caught.value)
    finally:
        holder.kill()
        holder.wait()


def _opens_elsewhere(path: Path) -> bool:
    code = f"import duckdb; duckdb.connect({str(path)!r}).close()"
    return subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0


def test_the_file_is_free_between_calls_and_held_inside_hold(tmp_path):
    path = tmp_path / "free.duckdb"
    store = DuckDBStore(path)
    store.create_session(SessionInfo())
    assert _opens_elsewhere(path)
    with store.hold():
        with store.hold():  # reentrant
            store.list_sessions()
        assert not _opens_elsewhere(path)
    assert _opens_elsewhere(path)


def test_threads_of_one_process_share_the_store(tmp_path):
    store = DuckDBStore(tmp_path / "threads.duckdb")
    other = DuckDBStore(tmp_path / "threads.duckdb", tenant_id="other")
    sessions = [store.create_session(SessionInfo()), other.create_session(SessionInfo())]
    messages = []
    for s, st in zip(sessions, (store, other), strict=True):
        m = Message(session_id=s.id, role="assistant")
        st.write([PutMessage(m), AppendMessage(s.id, m.id)])
        messages.append((st, m))
    errors: list[BaseException] = []

    def writer(st: DuckDBStore, m: Message) -> None:
        try:
            for _ in range(10):
                st.write([PutPart(TextPart(session_id=m.session_id, message_id=m.id))
                          for _ in range(5)])
                st.timeline(m.session_id)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=messages[i % 2]) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert [len(st.list_parts(m.id)) for st, m in messages] == [150, 150]
    assert _opens_elsewhere(tmp_path / "threads.duckdb")


def test_a_raw_duckdb_client_reads_the_file(tmp_path):
    path = tmp_path / "open.duckdb"
    store = DuckDBStore(path)
    session = store.create_session(SessionInfo(name="visible"))
    con = duckdb.connect(str(path), read_only=True)
    try:
        assert con.execute("SELECT name FROM session WHERE id = ?", [session.id]).fetchone() == (
            "visible",)
    finally:
        con.close()
