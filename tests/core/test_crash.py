"""A runner SIGKILLed mid-turn, through the real prompt path (fake server + litellm + DuckDB).

The child process (crash_worker.py) runs a prompt on a DuckDB file; the test kills it with
SIGKILL at a chosen point and then uses the same file from this process: the dead runner's
lease is taken over at once (and recorded), what it streamed up to its last checkpoint is
kept, and a call it was running is found with its arguments.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from forge_jupyter.session import runner
from forge_jupyter.store.duckdb.store import DuckDBStore
from forge_jupyter.testing import Turn, text, tool_call

WORKER = str(Path(__file__).with_name("crash_worker.py"))
pytestmark = pytest.mark.slow


def _start(db: Path, server, session: str = "s") -> subprocess.Popen:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.Popen([sys.executable, WORKER, str(db), server.openai_base, session],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _until(condition, timeout: float = 60.0, what: str = "the condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def _streaming(server) -> None:
    """Wait until the server has begun streaming its first answer."""
    _until(lambda: next((r for r in server.requests if r.responded_at), None),
           what="the child's first model request")


def _checkpointed_text(db: Path) -> str:
    """The text of the newest assistant message as the file holds it now (a checkpoint)."""
    store = DuckDBStore(db)
    try:
        for info in store.list_sessions().items:
            answers = [m for m in store.read_timeline(info.id) if m.role == "assistant"]
            if answers:
                return answers[-1].text
        return ""
    except Exception:  # the file being created by the child: not yet
        return ""
    finally:
        store.close()


def test_a_killed_runner_keeps_its_checkpointed_text_and_its_lease_is_taken_over_at_once(
        make_forge, server, tmp_path):
    streamed = "".join(f"word{i} " for i in range(400))  # ~3,600 characters over ~4.8 s
    server.add(Turn([text(streamed, chunk=15)], chunk_delay=0.02))
    db = tmp_path / "forge.duckdb"
    child = _start(db, server)
    try:
        # Killed once a checkpoint holding 500+ characters is in the file, before the end (not
        # at a fixed time: on a loaded machine the child may not have written one yet).
        _streaming(server)
        _until(lambda: len(_checkpointed_text(db)) >= 500, what="a checkpoint of 500 characters")
        os.kill(child.pid, signal.SIGKILL)
        # Not reaped: the dead runner stays a zombie, whose pid still answers os.kill(pid, 0).
        # (SIGKILL is delivered asynchronously: wait until the process has actually died.)
        _until(lambda: runner._proc_stat(child.pid)[0] == "Z", what="the child to die")
        server.add(Turn.text("back again"))
        forge = make_forge(db="duckdb")
        session = forge.session("s")
        started = time.monotonic()
        answer = session.prompt("are you there?")
        waited = time.monotonic() - started
    finally:
        child.kill()
        child.wait(10)

    assert answer.text == "back again"
    assert waited < runner.LEASE_TTL / 2  # taken over, not waited out
    taken = forge.store.events(session.id, type="recovery.lease_taken_over").items
    assert len(taken) == 1
    previous = runner.Owner.parse(taken[0].data["previous_owner"])
    assert previous is not None and previous.pid == child.pid
    assert taken[0].data["reason"] == f"process {child.pid} has exited"
    assert taken[0].data["would_have_expired_in"] > runner.LEASE_TTL / 2
    interrupted = [m for m in session.messages() if m.status == "interrupted"]
    assert len(interrupted) == 1
    kept = interrupted[0].text
    # the checkpoint of the first second is there (each chunk is 15 characters, 10 ms apart)
    assert len(kept) >= 500 and streamed.startswith(kept)
    assert [p for p in interrupted[0].parts if not p.is_terminal] == []
    assert forge.store.unfinished_messages(session.id) == []


def test_a_running_call_is_stored_with_its_arguments_before_it_runs(make_forge, server, tmp_path):
    server.add(Turn([text("Let me wait."), tool_call("slow", {"seconds": 30})]))
    db = tmp_path / "forge.duckdb"
    child = _start(db, server)
    try:
        # Another process (this one) reads the file while the child's tool is running.
        reader = DuckDBStore(db, lock_timeout=30)

        def running_row():
            rows = reader.sql("SELECT id, message_id, tool_state, time_start, "
                              "json_extract(data, '$.input') AS input FROM part "
                              "WHERE type = 'tool'")
            if len(rows) and rows.tool_state[0] == "running":
                return rows.iloc[0].to_dict()
            return None

        row = _until(running_row, what="the child's running tool row")
        assert child.poll() is None  # still running the tool
        assert row["input"] == '{"seconds":30}' and row["time_start"] is not None
        os.kill(child.pid, signal.SIGKILL)
        child.wait(10)  # reaped: the pid is gone altogether

        server.add(Turn.text("the wait was cut short"))
        forge = make_forge(db="duckdb")
        session = forge.session("s")
        answer = session.prompt("what happened?")
    finally:
        child.kill()
        child.wait(10)

    assert answer.text == "the wait was cut short"
    taken = forge.store.events(session.id, type="recovery.lease_taken_over").items
    assert taken[0].data["reason"] == f"process {child.pid} is not running"
    call = forge.store.get_message(row["message_id"]).parts
    call = next(p for p in call if p.type == "tool")
    assert (call.state, call.input) == ("error", {"seconds": 30})
    assert call.error.startswith("interrupted") and call.time_start is not None
    # the model reads the interrupted call as a closed error, with the arguments it sent
    sent = server.requests[-1].messages
    result = next(m for m in sent if m.get("role") == "tool")
    assert "interrupted" in result["content"]
