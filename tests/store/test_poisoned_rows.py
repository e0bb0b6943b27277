"""A row the store refuses never poisons the batch or the Forge: the failure is reported on
its message, the rest is written, the next prompt works. The store being unavailable is the
opposite case: every row is kept and written once it is back."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from forge_jupyter.bus import SessionStatus
from forge_jupyter.errors import StoreLocked
from forge_jupyter.message import Event, Message, SessionInfo, TextPart, ToolPart, now
from forge_jupyter.store.duckdb.store import DuckDBStore
from forge_jupyter.store.inmemory.store import MemoryStore
from forge_jupyter.store.projection import Projection
from forge_jupyter.testing import Turn, text, tool_call
from forge_jupyter.tools.base import ToolResult


class Unserializable:
    """A value no JSON encoder knows: what a custom tool might leave in its metadata."""


def _fresh(path: Path) -> DuckDBStore:
    return DuckDBStore(path)  # reads what the file holds, as another kernel would


def _rejected(store) -> list[dict]:
    return [row for e in store.events(type="store.rejected").items for row in e.data["rows"]]


def _buffered_turn(store, **fields) -> tuple[SessionInfo, Projection, Message]:
    """A new session, and in a projection over ``store`` a user message with three text parts
    and its timeline pointer (finished in the same batch as its parts), not flushed yet."""
    session = store.create_session(SessionInfo())
    projection = Projection(store)
    user = Message(session_id=session.id, role="user", status="completed", completed_at=now(),
                   **fields)
    projection.put_message(user)
    for i in range(3):
        projection.put_part(TextPart(session_id=session.id, message_id=user.id, text=f"part {i}",
                                     time_start=now(), time_end=now()))
    projection.append(session.id, user.id)
    return session, projection, user


# -- through the prompt path ---------------------------------------------------------------


def test_a_lone_surrogate_from_the_model_does_not_wedge_the_forge(make_forge, server, tmp_path):
    server.add(Turn([text("bad \ud800 here")]), Turn.text("the other session works"),
               Turn.text("this session works again"))
    forge = make_forge(db="duckdb")
    first = forge.session("first")
    answer = first.prompt("say something odd")  # never raises
    assert answer.is_terminal
    other = forge.session("other").prompt("hello")
    assert other.status == "completed" and other.text == "the other session works"
    again = first.prompt("and now?")
    assert again.status == "completed" and again.text == "this session works again"
    assert len(forge.messages()) == 6  # frames work
    assert forge.projection.pending == 0
    forge.close()

    store = _fresh(tmp_path / "forge.duckdb")
    timeline = list(store.iter_timeline(first.id))
    assert [m.role for m in timeline] == ["user", "assistant", "user", "assistant"]
    odd = timeline[1]
    assert odd.is_terminal
    # Whichever layer caught it: the text made storable, or the part reported on its message.
    assert "here" in odd.text or "was not stored" in odd.error.message
    assert timeline[3].text == "this session works again"
    assert [m.text for m in store.iter_timeline(other.session_id)] == [
        "hello", "the other session works"]


def test_a_tool_result_the_store_cannot_serialize_is_reported_and_the_run_goes_on(
        make_forge, server, tmp_path):
    server.add(Turn([tool_call("frame", {})]), Turn.text("made it"), Turn.text("next one"))
    forge = make_forge(db="duckdb")

    @forge.tool
    def frame() -> ToolResult:
        """Build a frame."""
        return ToolResult("built a frame", metadata={"frame": Unserializable()})

    notices: list[str] = []
    forge.bus.subscribe(lambda e: notices.append(e.detail.get("message", "")),
                        types=SessionStatus)
    session = forge.session("s")
    answer = session.prompt("build one")
    assert answer.status == "completed" and answer.text == "made it"
    assert any("could not be stored" in n for n in notices)
    assert session.prompt("again").text == "next one"  # the next prompt works
    # the model was told what happened to the call (the stand-in), not sent a broken row
    assert any("could not be stored" in str(m.get("content")) for m in server.requests[2].messages)
    forge.close()

    store = _fresh(tmp_path / "forge.duckdb")
    step = list(store.iter_timeline(session.id))[1]
    assert step.status == "error" and step.error.type == "not_stored"
    assert "tool" in step.error.message and "was not stored" in step.error.message
    assert "The rest of the message was saved" in step.error.message
    [stand_in] = [p for p in step.parts if p.metadata.get("not_stored")]
    assert stand_in.type == "text" and stand_in.synthetic
    assert stand_in.metadata["not_stored"]["type"] == "tool"
    assert "step-finish" in [p.type for p in step.parts]  # its good parts are all there
    assert [r["kind"] for r in _rejected(store)] == ["part"]


def test_the_answer_a_prompt_returns_is_the_message_as_stored_when_a_row_was_refused(
        make_forge, server, tmp_path):
    """The run ends on the step whose tool result the store refused (the budget is spent):
    the message prompt() returns says what the store holds — error, not_stored — not the
    run's own completed copy."""
    server.add(Turn([tool_call("frame", {})], usage=(20_000, 1_000)), Turn.text("never asked"))
    forge = make_forge(db="duckdb", model="openai/gpt-4o-mini")

    @forge.tool
    def frame() -> ToolResult:
        """Build a frame."""
        return ToolResult("built a frame", metadata={"frame": Unserializable()})

    session = forge.session("s")
    answer = session.prompt("build one", budget=0.001)
    assert answer.finish == "budget"
    assert answer.status == "error" and answer.error.type == "not_stored"
    assert "was not stored" in answer.error.message
    assert answer.text  # the run's parts stay on the returned message
    assert len(server.requests) == 1
    forge.close()
    stored = list(_fresh(tmp_path / "forge.duckdb").iter_timeline(session.id))[-1]
    assert stored.id == answer.id
    assert (stored.status, stored.error) == (answer.status, answer.error)


# -- the projection, on real stores -----------------------------------------------------


@pytest.fixture(params=["memory", "duckdb"])
def store(request, tmp_path):
    return MemoryStore() if request.param == "memory" else DuckDBStore(tmp_path / "p.duckdb")


def test_a_row_the_contract_refuses_is_dropped_and_reported_and_the_rest_written(store):
    session, projection, user = _buffered_turn(store)
    orphan = TextPart(session_id=session.id, message_id="msg_nowhere", text="lost")
    projection.put_part(orphan)
    projection.put_event(Event(session_id=session.id, type="note"))

    assert projection.flush() == 6  # no exception; every other row
    assert projection.pending == 0
    stored = store.get_message(user.id)
    assert [p.text for p in stored.parts] == ["part 0", "part 1", "part 2"]
    assert store.timeline_length(session.id) == 1
    assert [e.type for e in store.events(session.id).items] == ["note", "store.rejected"]
    [row] = _rejected(store)
    assert row["id"] == orphan.id and row["kind"] == "part" and "msg_nowhere" in row["reason"]
    # the next flush is an ordinary one
    projection.put_event(Event(session_id=session.id, type="later"))
    assert projection.flush() == 1


def test_a_refused_part_never_costs_the_parts_after_it(store):
    """The message finishes in the same batch as its parts: split into several transactions,
    the parts after the refused one must still land (a finished message takes no parts)."""
    session = store.create_session(SessionInfo())
    projection = Projection(store)
    running = Message(session_id=session.id, role="assistant")
    projection.put_message(running)

    def good(i: int) -> TextPart:
        return TextPart(session_id=session.id, message_id=running.id, text=f"t{i}",
                        time_start=now(), time_end=now())

    parts = [good(0), good(1),
             ToolPart(session_id=session.id, message_id=running.id, call_id="c1", tool="x",
                      state="completed", time_end=now(), metadata={"x": Unserializable()}),
             good(2), good(3)]  # ids in this order: parts are read back in id order
    for p in parts:
        projection.put_part(p)
    projection.put_message(running.model_copy(update={"status": "completed", "finish": "stop",
                                                      "completed_at": now()}))
    projection.append(session.id, running.id)
    if isinstance(store, MemoryStore):
        # memory keeps Python objects and refuses nothing of this kind: all of it lands
        assert projection.flush() == 7
        return
    assert projection.flush() == 6
    stored = store.get_message(running.id)
    texts = [p.text for p in stored.parts]
    assert texts[:2] == ["t0", "t1"] and texts[3:] == ["t2", "t3"]
    assert texts[2].startswith("[This tool part could not be stored: ")
    assert stored.status == "error" and "Unserializable" in stored.error.message
    assert stored.metadata["not_stored"] and store.timeline_length(session.id) == 1


def test_a_message_row_that_cannot_be_serialized_keeps_its_parts(tmp_path):
    store = DuckDBStore(tmp_path / "m.duckdb")
    session, projection, user = _buffered_turn(store, metadata={"obj": Unserializable()})
    bad_event = Event(session_id=session.id, type="odd", data={"obj": Unserializable()})
    projection.put_event(bad_event)
    projection.flush()

    stored = store.get_message(user.id)  # a stand-in row that says why
    assert stored.status == "error" and stored.error.type == "not_stored"
    assert "message's row was not stored" in stored.error.message
    assert [p.text for p in stored.parts] == ["part 0", "part 1", "part 2"]
    assert store.timeline_length(session.id) == 1
    [odd] = store.events(session.id, type="odd").items
    assert odd.id == bad_event.id and "Unserializable" in odd.data["not_stored"]
    assert sorted(r["kind"] for r in _rejected(store)) == ["event", "message"]


def test_a_part_refused_while_its_message_runs_is_noted_when_the_message_finishes(tmp_path):
    store = DuckDBStore(tmp_path / "r.duckdb")
    session = store.create_session(SessionInfo())
    projection = Projection(store)
    m = Message(session_id=session.id, role="assistant")
    projection.put_message(m)
    projection.append(session.id, m.id)
    projection.put_part(TextPart(session_id=session.id, message_id=m.id, text="x",
                                 metadata={"o": Unserializable()}))
    projection.flush()  # a flush before the next model request: the message still runs
    assert store.get_message(m.id).status == "running"
    projection.put_message(m.model_copy(update={"status": "completed", "completed_at": now()}))
    projection.flush()
    done = store.get_message(m.id)
    assert done.status == "error" and "was not stored" in done.error.message


# -- the store unavailable: keep everything, retry later ----------------------------------


def _hold_raw(path: Path, seconds: float) -> subprocess.Popen:
    """A program that is not ours holding the file: a plain DuckDB connection."""
    code = (f"import duckdb, time; c = duckdb.connect({str(path)!r}); "
            f"print('held', flush=True); time.sleep({seconds}); c.close()")
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)


def test_a_locked_store_keeps_every_row_and_writes_them_once_it_is_free(tmp_path):
    path = tmp_path / "held.duckdb"
    store = DuckDBStore(path, lock_timeout=0.3)
    session, projection, user = _buffered_turn(store)
    bad = TextPart(session_id=session.id, message_id=user.id, text="x",
                   metadata={"o": Unserializable()})
    projection.put_part(bad)
    # held by another program, and no copy can be made beside it (which would otherwise take
    # the writes meanwhile, test_foreign_readers.py): the store is unavailable
    path.with_name(path.name + ".pending.tmp").mkdir()
    holder = _hold_raw(path, 30)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(StoreLocked):
            projection.flush()
        assert projection.pending == 6  # nothing dropped: the rows are not the problem
    finally:
        holder.kill()
        holder.wait()
    deadline = time.monotonic() + 10
    while True:  # the OS lets go of the file a moment after the holder dies
        try:
            projection.flush()
            break
        except StoreLocked:
            assert time.monotonic() < deadline
    assert projection.pending == 0
    assert len(store.get_message(user.id).parts) == 4
    assert [r["id"] for r in _rejected(store)] == [bad.id]


def test_a_store_that_can_write_nothing_keeps_every_row_and_raises(tmp_path):
    """Not one row, stand-in or report goes in (someone dropped the tables in the DuckDB
    CLI): the rows are not the problem, so none is dropped."""
    path = tmp_path / "gutted.duckdb"
    store = DuckDBStore(path)
    session, projection, _user = _buffered_turn(store)
    projection.put_event(Event(session_id=session.id, type="note"))
    con = duckdb.connect(str(path))
    for table in ("event", "part", "message", "session_message"):
        con.execute(f"DROP TABLE {table} CASCADE")
    con.close()
    with pytest.raises(duckdb.CatalogException):
        projection.flush()
    assert projection.pending == 6
    with pytest.raises(duckdb.CatalogException):
        projection.flush()  # and again: nothing was marked or dropped meanwhile
    assert projection.pending == 6 and projection._damaged == {}
