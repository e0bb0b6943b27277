"""The projection fences each run's rows with its lease (store/fence.py), on a real DuckDB
file: one flush carries several sessions' rows; a session whose lease was lost loses only its
own rows, every other session's go in, and its run is told once."""

from __future__ import annotations

from forge_jupyter.errors import LeaseLost
from forge_jupyter.message import Event, Message, SessionInfo, TextPart, now
from forge_jupyter.store.duckdb.store import DuckDBStore
from forge_jupyter.store.ops import PutEvent
from forge_jupyter.store.projection import Projection


def _turn(projection: Projection, session_id: str, words: str) -> None:
    asked = Message(session_id=session_id, role="user", status="completed", completed_at=now())
    projection.put_message(asked)
    projection.put_part(TextPart(session_id=session_id, message_id=asked.id, text=words,
                                 time_end=now()))
    projection.append(session_id, asked.id)


def _texts(store: DuckDBStore, session_id: str) -> list[str]:
    return [m.text for m in store.read_timeline(session_id)]


def _fenced(tmp_path, sessions: int, fenced: int):
    """A store, the same file opened by another host, ``sessions`` new sessions of which the
    first ``fenced`` are leased to their runs and fenced in a projection; what the runs are
    told lands in the list returned last."""
    store = DuckDBStore(tmp_path / "forge.duckdb")
    other_host = DuckDBStore(tmp_path / "forge.duckdb")
    made = [store.create_session(SessionInfo()) for _ in range(sessions)]
    told: list[LeaseLost] = []
    projection = Projection(store)
    for s in made[:fenced]:
        assert store.acquire_lease(s.id, f"run-{s.id}", 60)
        projection.fence(s.id, f"run-{s.id}", told.append)
    return store, other_host, made, projection, told


def test_one_flush_fences_each_session_by_its_own_lease(tmp_path):
    store, other_host, (kept, lost, free), projection, told = _fenced(tmp_path, 3, 2)
    _turn(projection, kept.id, "first")
    _turn(projection, lost.id, "first")
    projection.flush()

    assert other_host.acquire_lease(lost.id, "host-b", 60, replacing=f"run-{lost.id}")
    for s in (kept, lost, free):
        _turn(projection, s.id, "second")
    projection.put_event(Event(session_id=lost.id, type="note"))
    assert projection.flush() == 6  # three rows each of kept and free: nothing of lost

    assert _texts(store, kept.id) == ["first", "second"]
    assert _texts(store, free.id) == ["second"]  # no fence: not checked
    assert _texts(store, lost.id) == ["first"]
    assert store.events(lost.id, type="note").items == []
    assert [e.session_ids for e in told] == [(lost.id,)]
    assert told[0].holders == {lost.id: "host-b"}
    assert projection.fences.lost(lost.id, f"run-{lost.id}") is told[0]
    assert projection.rows_fenced == 4

    # later rows of the lost run are dropped before they reach the store; the run is not told again
    _turn(projection, lost.id, "third")
    _turn(projection, kept.id, "third")
    projection.flush()
    assert _texts(store, lost.id) == ["first"] and _texts(store, kept.id)[-1] == "third"
    assert len(told) == 1 and projection.rows_fenced == 7

    # the run ends: its fence goes; a new run of this process takes the session back later
    projection.unfence(lost.id, f"run-{lost.id}")
    assert projection.fences.lost(lost.id) is None
    other_host.release_lease(lost.id, "host-b")
    assert store.acquire_lease(lost.id, "run-2", 60)
    projection.fence(lost.id, "run-2")
    _turn(projection, lost.id, "back")
    projection.flush()
    assert _texts(store, lost.id) == ["first", "back"]
    store.close()
    other_host.close()


def test_rows_a_run_left_buffered_stay_fenced_by_its_lease(tmp_path):
    """The store could not take a run's last rows (it kept its lease for them): after the
    run is over they land while the lease is still its, and never once another took it."""
    store, other_host, (kept, taken), projection, told = _fenced(tmp_path, 2, 2)
    for s in (kept, taken):
        _turn(projection, s.id, "last rows")
        projection.unfence(s.id, f"run-{s.id}")  # the run is over; its rows wait
    assert other_host.acquire_lease(taken.id, "host-b", 60, replacing=f"run-{taken.id}")
    projection.flush()
    assert _texts(store, kept.id) == ["last rows"]
    assert _texts(store, taken.id) == []
    assert [e.session_ids for e in told] == [(taken.id,)]
    # settled: no fence is left, and later rows of these sessions are not checked
    probe = [PutEvent(Event(session_id=s.id, type="probe")) for s in (kept, taken)]
    assert projection.fences.owners(probe) == {} and projection.fences.lost(taken.id) is None
    _turn(projection, kept.id, "unfenced")
    projection.flush()
    assert _texts(store, kept.id) == ["last rows", "unfenced"]
    store.close()
    other_host.close()
