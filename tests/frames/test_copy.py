"""Copying sessions between stores (forge_jupyter/copy.py): ``Forge.copy_to`` and
``python -m forge_jupyter copy``, verified row for row, never overwriting.

The source is the scripted run (frames_helpers.script: tool calls, a failed turn, a
compaction, a fork, another tenant), once in memory and once in a DuckDB file.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from forge_jupyter.copy import SCAN_FACTOR, CopyFailed, _known_messages, read_session, verify
from forge_jupyter.message import TextPart
from forge_jupyter.store.duckdb.store import DuckDBStore
from tests.frames.frames_helpers import all_events, live_sessions


def rows(store, session_id: str) -> dict:
    """Everything a session is, read through the store: info (but ``updated_at``), its
    timeline with every message and part, and its events."""
    info = store.get_session(session_id).model_dump()
    info.pop("updated_at")
    timeline = [{**m.row().model_dump(), "parts": [p.model_dump() for p in m.parts]}
                for m in store.iter_timeline(session_id)]
    events = sorted((e.model_dump() for e in all_events(store, session_id)
                     if e.type != "fork"), key=lambda e: e["id"])
    forks = [(e.type, e.data) for e in all_events(store, session_id, type="fork")]
    return {"info": info, "timeline": timeline, "events": events, "forks": forks}


def micro(value):
    """Instants as DuckDB holds them (microseconds), for a source kept in memory."""
    if isinstance(value, dict):
        return {k: round(v, 6) if isinstance(v, float) and k.endswith("_at") else micro(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [micro(v) for v in value]
    return value


def test_copy_to_a_new_duckdb_file_keeps_every_row(run, tmp_path):
    names = {"alpha", "beta", "gamma", "alpha-fork"}
    ids = {run.sessions[k].id for k in ("alpha", "beta", "gamma", "fork")}
    report = run.forge.copy_to(tmp_path / "copy.duckdb")
    assert set(report.sessions) == ids  # not "theirs": another tenant's
    assert report.sessions.index(run.sessions["alpha"].id) < report.sessions.index(
        run.sessions["fork"].id)  # a fork after its parent
    assert str(report).startswith("copied and verified 4 session(s)")

    with DuckDBStore(tmp_path / "copy.duckdb") as dst:
        assert {s.name for s in live_sessions(dst)} == names
        for sid in ids:
            assert micro(rows(dst, sid)) == micro(rows(run.forge.store, sid)), sid
        fork = dst.get_session(run.sessions["fork"].id)
        # the fork still shares its parent's first messages (bodies not duplicated)
        shared = [m for m in dst.iter_timeline(fork.id) if m.session_id != fork.id]
        assert shared and all(m.session_id == run.sessions["alpha"].id for m in shared)
        assert dst.timeline_length(fork.id) == run.forge.store.timeline_length(fork.id)
    with DuckDBStore(tmp_path / "copy.duckdb", tenant_id="other") as theirs:
        assert live_sessions(theirs) == []


def test_the_copy_reads_the_same_frames(run, fresh, tmp_path):
    target = fresh("duckdb")
    run.forge.copy_to(target.store, [run.sessions["beta"], "gamma"])
    assert {s.name for s in live_sessions(target.store)} == {"beta", "gamma"}
    source = run.forge.costs(by="session", session=run.sessions["beta"])
    copied = target.costs(by="session", session=run.sessions["beta"].id)
    assert copied.drop(columns="cost").equals(source.drop(columns="cost"))
    assert copied.cost[0] == pytest.approx(source.cost[0])


def test_a_copy_never_overwrites_and_refuses_before_writing(run, fresh):
    target = fresh("duckdb")
    alpha, beta = run.sessions["alpha"], run.sessions["beta"]
    run.forge.copy_to(target.store, ["alpha"])
    before = rows(target.store, alpha.id)

    with pytest.raises(CopyFailed, match=f"session {alpha.id} is already in the destination"
                       ".*nothing was copied"):
        run.forge.copy_to(target.store)  # alpha is there: beta, gamma and the fork are not written
    assert {s.name for s in live_sessions(target.store)} == {"alpha"}
    assert rows(target.store, alpha.id) == before

    target.session("beta")  # another session under a name being copied
    with pytest.raises(CopyFailed, match=f"the name 'beta' \\(session {beta.id}\\) is taken"):
        run.forge.copy_to(target.store, ["beta", "gamma"])
    assert {s.name for s in live_sessions(target.store)} == {"alpha", "beta"}

    gone = run.forge.copy_to(fresh("duckdb").store, ["gamma"])  # a deleted id stays taken
    other = fresh("duckdb")
    run.forge.copy_to(other.store, ["gamma"])
    other.store.delete_session(gone.sessions[0])
    with pytest.raises(CopyFailed, match="was deleted in the destination"):
        run.forge.copy_to(other.store, ["gamma"])


@pytest.mark.parametrize("destination", ["small", "large"])
def test_a_message_already_there_stops_the_copy(run, fresh, tmp_path, destination):
    """An imported export of the fork holds the parent's first messages as its own: copying
    the parent then finds its message ids taken, though its session id is free. A small
    destination is checked by reading its timelines, a large one id by id: both see it."""
    from forge_jupyter.message import Message, SessionInfo
    from forge_jupyter.store.ops import AppendMessage, PutMessage

    alpha, fork = run.sessions["alpha"], run.sessions["fork"]
    target = fresh("duckdb")
    target.import_session(run.forge.export_session(fork.id, tmp_path / "fork.json"))
    wanted = sum(run.forge.store.timeline_length(s.id) for s in (alpha, run.sessions["beta"]))
    if destination == "large":  # many rows per message to copy: looked up one by one
        bulk = target.store.create_session(SessionInfo(name="bulk"))
        ops = [PutMessage(Message(session_id=bulk.id, role="user", status="completed"))
               for _ in range((SCAN_FACTOR + 1) * wanted)]
        target.store.write([*ops, *(AppendMessage(bulk.id, op.message.id) for op in ops)])
    assert (_known_messages(target.store, wanted) is None) == (destination == "large")
    before = {s.id for s in live_sessions(target.store)}
    first = run.forge.store.iter_timeline(alpha.id).__next__().id
    with pytest.raises(CopyFailed, match=f"message {first} of session {alpha.id} is already in "
                       "the destination.*nothing was copied"):
        run.forge.copy_to(target.store, ["beta", "alpha"])
    assert {s.id for s in live_sessions(target.store)} == before  # not even beta


def test_an_id_another_tenant_holds_stops_that_session_whole(run, tmp_path):
    """Another tenant's rows are invisible to the check; its ids still conflict at the write.
    The sessions before it stay copied (and verified), that one is not written at all."""
    beta, gamma = run.sessions["beta"], run.sessions["gamma"]
    path = tmp_path / "shared.duckdb"
    run.forge.copy_to(path, ["gamma"], tenant="other")
    with pytest.raises(CopyFailed, match=f"session {gamma.id} was not copied: .*duplicate id.*"
                       f"copied and verified before it: {beta.id}; nothing of {gamma.id}"):
        run.forge.copy_to(path, ["beta", "gamma"])
    with DuckDBStore(path) as mine, DuckDBStore(path, tenant_id="other") as theirs:
        assert [s.id for s in live_sessions(mine)] == [beta.id]
        assert micro(rows(mine, beta.id)) == micro(rows(run.forge.store, beta.id))
        assert [s.id for s in live_sessions(theirs)] == [gamma.id]
    with pytest.raises(ValueError, match="tenant"):  # a Store has its tenant already
        run.forge.copy_to(run.other.store, ["beta"], tenant="third")


def test_a_fork_is_copied_only_with_its_parent(run, fresh):
    fork, alpha = run.sessions["fork"], run.sessions["alpha"]
    target = fresh("duckdb")
    with pytest.raises(CopyFailed, match=f"fork of session {alpha.id}.*--session {alpha.id}"):
        run.forge.copy_to(target.store, [fork.id])
    assert live_sessions(target.store) == []
    report = run.forge.copy_to(target.store, [fork.id, "alpha"])
    assert report.sessions == [alpha.id, fork.id]


def test_an_unknown_session_is_named(run, fresh):
    with pytest.raises(CopyFailed, match="no session 'nope' to copy"):
        run.forge.copy_to(fresh("duckdb").store, ["beta", "nope"])
    with pytest.raises(CopyFailed, match="no session"):  # another tenant's id is unknown here
        run.forge.copy_to(fresh("duckdb").store, [run.sessions["theirs"].id])


def test_a_refused_copy_leaves_no_new_file_and_an_old_one_untouched(run, tmp_path):
    """A refused copy to a path that did not exist leaves nothing there (before, an empty
    database the person could take for a copy); an existing file keeps what it held."""
    new = tmp_path / "sub" / "new.duckdb"
    new.parent.mkdir()
    for refused in (["nope"], [run.sessions["theirs"].id]):
        with pytest.raises(CopyFailed, match="no session"):
            run.forge.copy_to(new, refused)
        assert sorted(new.parent.iterdir()) == []  # no database, no .wal, no lock sidecar
    missing = cli(str(_first_file(run, tmp_path)), str(new), "--session", "nope")
    assert missing.returncode == 1 and "no session 'nope'" in missing.stderr
    assert sorted(new.parent.iterdir()) == []

    old = tmp_path / "old.duckdb"
    run.forge.copy_to(old, ["beta"])
    with pytest.raises(CopyFailed, match="is already in the destination"):
        run.forge.copy_to(old, ["beta"])
    with DuckDBStore(old) as kept:
        assert [s.name for s in live_sessions(kept)] == ["beta"]


def _first_file(run, tmp_path: Path) -> Path:
    """The run's sessions in a DuckDB file (its store may be in memory), made once."""
    first = tmp_path / "first.duckdb"
    if not first.exists():
        run.forge.copy_to(first)
    return first


def test_the_verification_sees_a_difference(run, fresh):
    target = fresh("duckdb")
    beta = run.sessions["beta"]
    run.forge.copy_to(target.store, ["beta"])
    verify(read_session(run.forge.store, beta.id), target.store)  # the same: passes

    def altered(change) -> None:
        copy = read_session(run.forge.store, beta.id)
        change(copy)
        with pytest.raises(CopyFailed, match=f"session {beta.id} was written but reads back different"):
            verify(copy, target.store)

    def text(copy):
        m = next(m for m in copy.messages if any(isinstance(p, TextPart) for p in m.parts))
        i = next(i for i, p in enumerate(m.parts) if isinstance(p, TextPart))
        m.parts[i] = m.parts[i].model_copy(update={"text": m.parts[i].text + "!"})

    altered(text)
    altered(lambda c: c.messages.reverse())
    altered(lambda c: c.events.pop())
    altered(lambda c: setattr(c, "info", c.info.model_copy(update={"title": "other"})))


def test_into_another_tenant(run, tmp_path):
    run.forge.copy_to(tmp_path / "team.duckdb", ["gamma"], tenant="team")
    with DuckDBStore(tmp_path / "team.duckdb", tenant_id="team") as team:
        assert [s.name for s in live_sessions(team)] == ["gamma"]
    with DuckDBStore(tmp_path / "team.duckdb") as default:
        assert live_sessions(default) == []


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.run([sys.executable, "-m", "forge_jupyter", "copy", *args],
                          capture_output=True, text=True, env=env, timeout=120)


def test_the_command_line(run, tmp_path):
    # the run's own store may be in memory: put it in a file first
    first = tmp_path / "first.duckdb"
    run.forge.copy_to(first)
    second = tmp_path / "second.duckdb"
    done = cli(str(first), str(second), "--session", "beta", "--session", run.sessions["gamma"].id)
    assert done.returncode == 0, done.stderr
    assert "copied and verified 2 session(s)" in done.stdout
    assert run.sessions["beta"].id in done.stdout
    with DuckDBStore(second) as dst, DuckDBStore(first) as src:
        assert {s.name for s in live_sessions(dst)} == {"beta", "gamma"}
        assert rows(dst, run.sessions["beta"].id) == rows(src, run.sessions["beta"].id)

    again = cli(str(first), str(second))  # beta and gamma are there now
    assert again.returncode == 1
    assert "is already in the destination" in again.stderr and "nothing was copied" in again.stderr
    assert "Traceback" not in again.stderr

    missing = cli(str(tmp_path / "nope.duckdb"), str(second))
    assert missing.returncode == 1 and "no database at" in missing.stderr
    assert not (tmp_path / "nope.duckdb").exists()  # the source was not made
    memory = cli(str(first), ":memory:")
    assert memory.returncode == 1 and ":memory: holds nothing" in memory.stderr


def test_duckdb_to_postgresql_and_back(run, pg_empty, tmp_path):
    from forge_jupyter.store.postgres.store import PostgresStore

    _, app = pg_empty  # the run's migrated database, emptied (tests/pg_cluster.py)
    first, back = tmp_path / "first.duckdb", tmp_path / "back.duckdb"
    run.forge.copy_to(first)
    ids = [run.sessions[k].id for k in ("alpha", "beta", "gamma", "fork")]

    there = cli(str(first), app.dsn)
    assert there.returncode == 0, there.stderr
    assert "copied and verified 4 session(s)" in there.stdout
    home = cli(app.dsn, str(back))
    assert home.returncode == 0, home.stderr
    assert "copied and verified 4 session(s)" in home.stdout

    with DuckDBStore(first) as a, PostgresStore(app.dsn) as pg, DuckDBStore(back) as b:
        for sid in ids:
            assert rows(pg, sid) == rows(a, sid), sid
            assert rows(b, sid) == rows(a, sid), sid
        assert {s.id for s in live_sessions(pg)} == set(ids)
    with PostgresStore(app.dsn, tenant_id="other") as theirs:  # the policy keeps it to one tenant
        assert live_sessions(theirs) == []

    again = cli(str(first), app.dsn)
    assert again.returncode == 1 and "is already in the destination" in again.stderr
    assert app.password not in again.stderr + again.stdout + there.stdout
