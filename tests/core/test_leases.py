"""Whose lease may be taken over at once, through the real prompt path (DuckDB file, litellm).

A lease names host, pid, process start time and place (boot + pid namespace): only a lease of
this host and place whose process is gone — exited, a zombie, or its pid reused — is taken
over before its expiry. Everything else, however it is spelled, refuses with SessionBusy.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading

import pytest

from forge_jupyter.errors import SessionBusy
from forge_jupyter.session import runner
from forge_jupyter.testing import Turn, text

HOST = socket.gethostname()
PLACE = runner._place()


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait(30)
    return child.pid


@pytest.fixture
def sleeper():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield child
    child.kill()
    child.wait(10)


def _owner(host: str, pid: int, start: int, place: str = PLACE) -> str:
    return str(runner.Owner(host, pid, start, place, "c0ffee00"))


def _takeovers(forge, sid: str) -> list:
    return forge.store.events(sid, type="recovery.lease_taken_over").items


@pytest.mark.parametrize("spelling", [
    "another host",
    "same host name, another boot or pid namespace (a container)",
    "host name in capitals",
    "host name with a space",
    "the owner form of an older version",
    "four fields",
    "not a number",
    "empty",
])
def test_a_lease_not_provably_dead_here_refuses_until_it_expires(make_forge, server, spelling):
    dead = _dead_pid()
    owner = {
        "another host": _owner("otherhost", dead, 1),
        "same host name, another boot or pid namespace (a container)": _owner(HOST, dead, 1,
                                                                               "0123456789"),
        "host name in capitals": _owner(HOST.upper() if HOST.upper() != HOST else "X" + HOST,
                                        dead, 1),
        "host name with a space": _owner(f" {HOST}", dead, 1),
        "the owner form of an older version": f"{HOST}:{dead}:c0ffee00",
        "four fields": f"{HOST}:{dead}:1:{PLACE}",
        "not a number": f"{HOST}:{dead}x:1:{PLACE}:c0ffee00",
        "empty": "",
    }[spelling]
    forge = make_forge(db="duckdb")
    session = forge.session("s")
    assert forge.store.acquire_lease(session.id, owner, ttl=30)
    with pytest.raises(SessionBusy, match="lease expires in"):
        session.prompt("q")
    assert server.requests == []
    assert forge.store.lease(session.id)[0] == owner
    assert _takeovers(forge, session.id) == []


def test_a_live_process_of_this_host_keeps_its_lease(make_forge, server, sleeper):
    forge = make_forge(db="duckdb")
    session = forge.session("s")
    start = runner._proc_stat(sleeper.pid)[1]
    assert forge.store.acquire_lease(session.id, _owner(HOST, sleeper.pid, start), ttl=30)
    with pytest.raises(SessionBusy, match=f"being run by process {sleeper.pid} on "):
        session.prompt("q")
    assert server.requests == []


def test_a_reused_pid_is_told_apart_by_its_start_time(make_forge, server, sleeper):
    server.add(Turn.text("taken over"))
    forge = make_forge(db="duckdb")
    session = forge.session("s")
    start = runner._proc_stat(sleeper.pid)[1]
    # the lease's process started earlier than the one that has its pid now
    assert forge.store.acquire_lease(session.id, _owner(HOST, sleeper.pid, start - 1), ttl=30)
    assert session.prompt("q").text == "taken over"
    (event,) = _takeovers(forge, session.id)
    assert event.data["reason"] == f"pid {sleeper.pid} now belongs to another process"


def test_a_dead_process_of_this_host_loses_its_lease_at_once(make_forge, server):
    server.add(Turn.text("taken over"))
    forge = make_forge(db="duckdb")
    session = forge.session("s")
    dead = _dead_pid()
    owner = _owner(HOST, dead, 12345)
    assert forge.store.acquire_lease(session.id, owner, ttl=30)
    assert session.prompt("q").text == "taken over"
    (event,) = _takeovers(forge, session.id)
    assert event.data["previous_owner"] == owner
    assert event.data["reason"] == f"process {dead} is not running"
    assert forge.store.lease(session.id) is None  # and released at the end of the run


def test_a_lease_this_process_left_behind_is_taken_over(make_forge, server):
    server.add(Turn.text("mine again"))
    forge = make_forge(db="duckdb")
    session = forge.session("s")
    assert forge.store.acquire_lease(session.id, runner.new_owner(), ttl=30)  # no run holds it
    assert session.prompt("q").text == "mine again"
    (event,) = _takeovers(forge, session.id)
    assert event.data["reason"] == "no run of this process holds it any more"


def test_a_run_of_this_process_through_another_store_object_keeps_its_lease(make_forge, server):
    """Two Forge objects on one file in one process: each run is its own lease owner."""
    server.add(Turn([text("slow " * 60, chunk=5)], chunk_delay=0.02))
    first, second = make_forge(db="duckdb"), make_forge(db="duckdb")
    session = first.session("s")
    started = threading.Event()
    first.bus.subscribe(lambda e: started.set())
    run = threading.Thread(target=session.prompt, args=("one",))
    run.start()
    try:
        assert started.wait(30)
        with pytest.raises(SessionBusy, match="being run by another run in this process"):
            second.session("s").prompt("two")
    finally:
        run.join(60)
    assert _takeovers(first, session.id) == []
    assert len(server.requests) == 1
