"""Reads build models without validating the store's own columns again (store/trusted.py):
every object read is indistinguishable from the one pydantic's validator makes of the same row,
and a row the store did not write (a file altered by hand) is still refused, never returned as
an invalid object."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import duckdb
import pytest
from pydantic import BaseModel, ValidationError

from forge_jupyter.message import (
    PART_TYPES,
    AgentPart,
    CompactionPart,
    ErrorInfo,
    FilePart,
    Message,
    PatchFile,
    PatchPart,
    ReasoningPart,
    RetryPart,
    SessionInfo,
    StepFinishPart,
    StepStartPart,
    SubtaskPart,
    TextPart,
    Tokens,
    ToolPart,
)
from forge_jupyter.store import rows_to_models as trusted
from forge_jupyter.store.duckdb.store import DuckDBStore
from forge_jupyter.store.inmemory.store import MemoryStore
from forge_jupyter.store.ops import AppendMessage, PutMessage, PutPart
from forge_jupyter.store.sql import reads as duckdb_reads

UNICODE = 'quote " backslash \\ tab \t newline \n control \x01 emoji 🦆 é 中文 \u2028 \U0010ffff'
HUGE = "lorem ipsum " * 100_000  # 1.2 MB in one part
NESTED = {"a": {"b": [1, 2.5, None, True, {"c": UNICODE}]}, "big": 2**63 - 1, "neg": -(2**63),
          "float": 1e-300, "empty": {}, "list": [], UNICODE: UNICODE}


def every_part_type(session_id: str, message_id: str) -> list:
    """One or more parts of each type, with odd values in their fields."""
    ids = {"session_id": session_id, "message_id": message_id}
    return [
        TextPart(**ids, text=""), TextPart(**ids, text=UNICODE, synthetic=True, time_start=1.5,
                                           time_end=2.000001, metadata=NESTED),
        TextPart(**ids, text=HUGE, time_start=0.1, time_end=0.30000000000000004),
        ReasoningPart(**ids, text=UNICODE, time_start=1.0),
        ToolPart(**ids, call_id="c1", tool="python", input={"code": UNICODE, "n": [NESTED]},
                 raw_input="{bad json", state="completed", output=UNICODE, title="t",
                 time_start=1.0, time_end=2.0),
        ToolPart(**ids, call_id="c2", tool="sql", state="pending"),
        ToolPart(**ids, call_id="c3", tool="sql", state="error", error=UNICODE, time_end=3.0),
        FilePart(**ids, path="a.csv", url="file:///a.csv", filename=UNICODE),
        AgentPart(**ids, name="plan"), CompactionPart(**ids, auto=False, reason=UNICODE,
                                                      tail_start="msg_x"),
        SubtaskPart(**ids, agent="build", prompt=UNICODE, child_session_id="ses_child"),
        StepStartPart(**ids, model="openai/gpt"),
        StepFinishPart(**ids, reason="stop", cost=None, model="m",
                       tokens=Tokens(input=2**53 + 1, output=3, estimated=True)),
        PatchPart(**ids, files=[PatchFile(path="a.py", diff=UNICODE, additions=3, deletions=1),
                                PatchFile(path="b.py", diff="")]),
        RetryPart(**ids, attempt=2, error="429", wait=0.25),
    ]


def odd_messages(session_id: str) -> list[Message]:
    """A message holding every part type, and messages with odd content of their own."""
    def message(**fields: Any) -> Message:
        return Message(session_id=session_id, role="assistant", status="completed",
                       completed_at=2_000_000_000.000001, **fields)

    full = message(agent=UNICODE, model="m/" + UNICODE, provider="p", finish="stop",
                   error=ErrorInfo(type="E", message=UNICODE), summary=True, cost=5e-324,
                   tokens=Tokens(input=2**62, output=1, reasoning=2, cache_read=3,
                                 cache_write=4, estimated=True),
                   origin={"notebook": UNICODE, "cell": None, "n": [1, 2.5]}, metadata=NESTED)
    full = full.model_copy(update={"parts": every_part_type(session_id, full.id)})
    empty = Message(session_id=session_id, role="user")  # running, no parts, every default
    huge = message(metadata={"big": HUGE}, cost=None, origin={})
    huge = huge.model_copy(update={"parts": [TextPart(session_id=session_id, message_id=huge.id,
                                                      text=HUGE)]})
    blank = message(agent="", model="", finish="", error=ErrorInfo(type="", message=""),
                    metadata={"": ""}, cost=0.1 + 0.2)
    return [full, huge, blank, empty]  # the running one last: nothing follows it


def assert_twins(read: Any, validated: Any, where: str = "message") -> None:
    """``read`` is what pydantic's validator would have made: same types all the way down,
    same fields in the same order, same fields set, no extras, no private state."""
    assert type(read) is type(validated), where
    if isinstance(read, BaseModel):
        assert list(read.__dict__) == list(validated.__dict__), where
        assert read.model_fields_set == validated.model_fields_set, where
        assert read.__pydantic_extra__ == validated.__pydantic_extra__, where
        assert read.__pydantic_private__ == validated.__pydantic_private__, where
        for name, value in read.__dict__.items():
            assert_twins(value, validated.__dict__[name], f"{where}.{name}")
    elif isinstance(read, list):
        assert len(read) == len(validated), where
        for i, (a, b) in enumerate(zip(read, validated, strict=True)):
            assert_twins(a, b, f"{where}[{i}]")
    elif isinstance(read, dict):
        assert list(read) == list(validated), where
        for key, value in read.items():
            assert_twins(value, validated[key], f"{where}[{key!r}]")
    elif isinstance(read, float):
        assert read == validated or (math.isnan(read) and math.isnan(validated)), where
    else:
        assert read == validated, where


def validated_twin(message: Message, *, parts: bool = True) -> Message:
    """What the validator makes of a complete stored row: every field given, parts included."""
    data = message.model_dump(mode="json")
    if parts:
        data["parts"] = [p.model_dump(mode="json") for p in message.parts]
    return Message.model_validate_json(json.dumps(data))


def _written(store, messages: list[Message]) -> SessionInfo:
    session = store.get_session(messages[0].session_id)
    ops: list = []
    for m in messages:
        ops += [PutMessage(m), *(PutPart(p) for p in m.parts), AppendMessage(session.id, m.id)]
    store.write(ops)
    return session


def test_every_part_type_is_in_the_odd_messages():
    parts = every_part_type("s", "m")
    assert {p.type for p in parts} == set(PART_TYPES)  # a new part type must be added here


def test_duckdb_reads_are_the_validated_twins_of_what_was_written(tmp_path: Path):
    store = DuckDBStore(tmp_path / "t.duckdb")
    session = store.create_session(SessionInfo())
    messages = odd_messages(session.id)
    _written(store, messages)
    twins = [validated_twin(m) for m in messages]

    assert_twins(store.unfinished_messages(session.id), [twins[-1]])  # the running one
    for read in (store.read_timeline(session.id), list(store.iter_timeline(session.id, page_size=3)),
                 store.timeline(session.id, limit=10).items,
                 [store.get_message(m.id) for m in messages]):
        assert_twins(read, twins)
        assert read == messages
        assert [m.model_dump() for m in read] == [m.model_dump() for m in messages]
        assert [m.model_dump_json() for m in read] == [m.model_dump_json() for m in messages]
        assert [repr(m) for m in read] == [repr(m) for m in messages]
        assert [[p.model_dump() for p in m.parts] for m in read] == [
            [p.model_dump() for p in m.parts] for m in messages]
    bare = store.timeline(session.id, limit=10, with_parts=False).items
    assert_twins(bare, [validated_twin(m, parts=False) for m in messages])
    assert all(m.parts == [] and "parts" not in m.model_fields_set for m in bare)


def test_rows_this_version_wrote_are_built_without_the_validator(tmp_path: Path):
    """The fast path is the one taken (were DuckDB to name its types differently, every read
    would fall back to validation, correct but slow)."""
    store = DuckDBStore(tmp_path / "t.duckdb")
    session = store.create_session(SessionInfo())
    messages = odd_messages(session.id)
    _written(store, messages)
    with store.reading() as con:
        result = con.execute(f"SELECT {trusted.MESSAGE_SELECT} FROM message t")
        trusted.check_description(result.description)  # raises Untrusted otherwise
        rows = result.fetchall()
    assert not any(row[-1] for row in rows)  # no row suspect
    built = trusted.messages_from_rows(rows, None)
    assert_twins([built[m.id] for m in messages], [validated_twin(m, parts=False) for m in messages])


def test_duckdb_reads_equal_the_rows_validated_by_pydantic(tmp_path: Path):
    """The same rows read the way they were before (DuckDB writes each as JSON, pydantic
    validates it): the two reads cannot be told apart."""
    store = DuckDBStore(tmp_path / "t.duckdb")
    session = store.create_session(SessionInfo())
    messages = odd_messages(session.id)
    _written(store, messages)
    ids = [m.id for m in messages] + [messages[0].id]  # an id named twice, twice
    with store.reading() as con:
        for parts in (True, False):
            fast = duckdb_reads.messages_by_id(con, store.tenant_id, ids, parts=parts)
            slow = duckdb_reads._validated_messages(con, store.tenant_id, ids, sorted(set(ids)),
                                                     parts=parts)
            assert_twins(fast, slow)
            assert fast[0] is not fast[-1]  # two objects, as the validator gives


def test_a_read_message_behaves_like_a_validated_one_when_changed(tmp_path: Path):
    store = DuckDBStore(tmp_path / "t.duckdb")
    session = store.create_session(SessionInfo())
    messages = odd_messages(session.id)
    _written(store, messages)
    [read, twin] = [store.get_message(messages[-1].id), validated_twin(messages[-1])]
    for m in (read, twin):
        m.status = "completed"
        m.tokens.input += 5
        m.metadata["k"] = [1]
        m.parts.append(TextPart(session_id=session.id, message_id=m.id, id="prt_x", text="x",
                                created_at=1.0))
    assert_twins(read, twin)
    again = store.get_message(messages[-1].id)  # the store's copy did not change
    assert again.status == "running" and again.tokens.input == 0 and again.parts == []
    copied, twin_copy = read.model_copy(update={"finish": "stop"}), twin.model_copy(
        update={"finish": "stop"})
    assert_twins(copied, twin_copy)
    assert validated_twin(read) == read  # still a valid message


def test_memory_reads_are_the_copies_they_were(tmp_path: Path):
    store = MemoryStore()
    session = store.create_session(SessionInfo())
    messages = odd_messages(session.id)
    _written(store, messages)
    stored = [store.get_message(m.id, with_parts=False) for m in messages]
    expected = [m.model_copy(update={"parts": list(w.parts)}) for m, w in zip(stored, messages,
                                                                              strict=True)]
    for read in (store.read_timeline(session.id), list(store.iter_timeline(session.id)),
                 [store.get_message(m.id) for m in messages]):
        assert_twins(read, expected)
        assert read == messages


# -- rows the store did not write ------------------------------------------------------


def _tampered(tmp_path: Path, sql: str, params: list | None = None) -> tuple[DuckDBStore, Message]:
    path = tmp_path / "tampered.duckdb"
    store = DuckDBStore(path)
    session = store.create_session(SessionInfo())
    messages = odd_messages(session.id)
    _written(store, messages)
    with duckdb.connect(str(path)) as con:  # another program, the DuckDB CLI
        con.execute(sql, params or [])
    return store, messages[0]


@pytest.mark.parametrize("sql", [
    "UPDATE message SET role = 'robot'",
    "UPDATE message SET role = 'User'",
    "UPDATE message SET status = 'done '",
    "UPDATE message SET error_type = 'E', error_message = NULL",
    "UPDATE message SET metadata = '[1, 2]'",
    "UPDATE message SET metadata = 'null'",
    "UPDATE message SET origin = '\"a string\"'",
    "UPDATE part SET data = '{\"type\": \"text\"}'",
    "UPDATE part SET data = replace(data, '\"type\":\"text\"', '\"type\":\"sound\"')",
    "UPDATE part SET data = '{}'",
    "UPDATE part SET data = replace(data, '\"metadata\":{', '\"extra\":1,\"metadata\":{')",
])
def test_a_row_altered_by_hand_is_refused_as_before(tmp_path: Path, sql: str):
    store, message = _tampered(tmp_path, sql)
    for read in (lambda: store.read_timeline(message.session_id),
                 lambda: store.get_message(message.id),
                 lambda: store.timeline(message.session_id, limit=2).items):
        with pytest.raises(ValidationError):
            read()


def test_a_null_the_model_refuses_is_refused(tmp_path: Path):
    store, message = _tampered(tmp_path, "UPDATE message SET agent = NULL")  # a nullable column
    with pytest.raises(ValidationError):
        store.read_timeline(message.session_id)


def test_a_column_of_another_type_is_read_through_the_validator(tmp_path: Path):
    """A column altered to another type: its values are no longer what this version wrote, so
    pydantic validates them — here coercing the text back to the integers they were."""
    store, message = _tampered(tmp_path, "ALTER TABLE message ALTER tokens_input TYPE VARCHAR")
    read = store.get_message(message.id)
    assert read.tokens.input == 2**62 and type(read.tokens.input) is int
    assert read == message
    store, message = _tampered(tmp_path / "2", "ALTER TABLE message ALTER tokens_output TYPE VARCHAR; "
                               "UPDATE message SET tokens_output = 'many'")
    with pytest.raises(ValidationError):
        store.get_message(message.id)


def test_a_row_altered_into_something_valid_reads_as_pydantic_reads_it(tmp_path: Path):
    """Not every change by hand is corrupt: a value the validator accepts reads back, validated."""
    store, message = _tampered(
        tmp_path, "UPDATE part SET data = replace(data, '\"wait\":0.25', '\"wait\":1')")
    retry = next(p for p in store.get_message(message.id).parts if p.type == "retry")
    assert retry.wait == 1.0 and type(retry.wait) is float  # coerced as the validator does
    store2, message2 = _tampered(tmp_path / "2", "UPDATE message SET metadata = NULL")
    assert store2.get_message(message2.id).metadata == {}  # the column's NULL: no metadata
