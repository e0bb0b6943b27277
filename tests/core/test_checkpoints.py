"""Streamed text is checkpointed about once a second; stored snapshots are real copies.

Through the real prompt path: the fake model server streams slowly over HTTP, litellm reads it,
and the DuckDB file is read by a second store object while the turn is still streaming.
"""

from __future__ import annotations

import threading
import time

import pytest

from forge_jupyter.bus import Bus, PartDelta, PartUpdated
from forge_jupyter.message import Message, ToolPart
from forge_jupyter.session.writer import Writer
from forge_jupyter.store.duckdb.store import DuckDBStore
from forge_jupyter.store.projection import Projection
from forge_jupyter.testing import Turn, reasoning, text

STREAMED = "".join(f"token{i} " for i in range(300))  # 2,390 characters


def _slow(kind: str) -> Turn:
    """~2.5 s of streaming: 300 pieces of 8 characters, 8 ms apart."""
    block = text(STREAMED, chunk=8) if kind == "text" else reasoning(STREAMED, chunk=8)
    tail = [text("done")] if kind == "reasoning" else []
    return Turn([block, *tail], chunk_delay=0.008)


@pytest.mark.parametrize("kind", ["text", "reasoning"])
def test_an_open_block_is_checkpointed_at_most_once_a_second_while_it_streams(
        make_forge, server, tmp_path, kind):
    server.add(_slow(kind))
    forge = make_forge(db="duckdb")
    session = forge.session("s")
    rows: list = []
    deltas: list = []
    first_checkpoint = threading.Event()

    def watch(e) -> None:
        if isinstance(e, PartDelta):
            deltas.append(e)
        elif isinstance(e, PartUpdated) and e.part.type == kind:
            rows.append((time.monotonic(), e.part))
            if e.part.time_end is None and e.part.text:
                first_checkpoint.set()

    forge.bus.subscribe(watch)
    result: dict = {}
    run = threading.Thread(target=lambda: result.setdefault("answer", session.prompt("go")))
    run.start()
    try:
        assert first_checkpoint.wait(30)
        # What another reader of the file sees while the turn still streams.
        reader = DuckDBStore(tmp_path / "forge.duckdb", lock_timeout=30)
        deadline = time.monotonic() + 10
        stored = ""
        while not stored and time.monotonic() < deadline:
            found = reader.sql("SELECT json_extract_string(data, '$.text') AS t FROM part "
                               "WHERE type = ? AND time_end IS NULL", [kind])
            stored = found.t[0] if len(found) else ""
            time.sleep(0.02)
    finally:
        run.join(60)

    assert stored and STREAMED.startswith(stored) and len(stored) < len(STREAMED.rstrip())
    checkpoints = [(t, p) for t, p in rows if p.time_end is None and p.text]
    stream_seconds = rows[-1][0] - rows[0][0]
    assert stream_seconds > 1.5
    # a timer, not per delta: hundreds of deltas, one row a second at most
    assert 1 <= len(checkpoints) <= stream_seconds + 1
    # (a piece with no space in it waits for the next one: the live view is scrubbed by word)
    assert len([d for d in deltas if d.field == "text"]) >= 250
    gaps = [b[0] - a[0] for a, b in zip(checkpoints, checkpoints[1:], strict=False)]
    assert all(g >= 0.9 for g in gaps), gaps
    texts = [p.text for _, p in checkpoints]
    assert all(STREAMED.startswith(t) for t in texts) and texts == sorted(texts, key=len)
    assert [p.text for _, p in rows][-1] == STREAMED.rstrip()  # the end row, whole and trimmed
    assert result["answer"].status == "completed"


def test_a_quick_block_writes_no_checkpoint(make_forge, server):
    server.add(Turn.text("over in a moment"))
    forge = make_forge()
    seen = []
    forge.bus.subscribe(lambda e: seen.append(e.part), types=PartUpdated)
    answer = forge.session("s").prompt("q")
    texts = [p.text for p in seen if p.type == "text" and p.message_id == answer.id]
    assert texts == ["", "over in a moment"]  # start and end rows only


def test_the_reasoning_start_row_is_not_changed_by_the_signature_that_comes_later(
        make_forge, server):
    """The Processor mutates the live part's metadata at the block's end: the rows published
    (and buffered for the store) before that must not change with it."""
    server.add(Turn([reasoning("Think first. "), text("Answer.")]))
    forge = make_forge(protocol="anthropic")
    rows = []
    forge.bus.subscribe(lambda e: rows.append(e.part), types=PartUpdated)
    answer = forge.session("s").prompt("q")
    thought = [p for p in rows if p.type == "reasoning"]
    assert len(thought) >= 2
    assert "signature" not in thought[0].metadata  # as it was when published
    assert thought[-1].metadata.get("signature")
    stored = next(p for p in forge.store.get_message(answer.id).parts if p.type == "reasoning")
    assert stored.metadata["signature"] == thought[-1].metadata["signature"]


def test_a_stored_snapshot_does_not_follow_later_mutation_of_the_part(tmp_path):
    store = DuckDBStore(tmp_path / "forge.duckdb")
    bus = Bus()
    published = []
    bus.subscribe(lambda e: published.append(e.part), types=PartUpdated)
    writer = Writer(Projection(store), bus)
    from forge_jupyter.message import SessionInfo

    info = store.create_session(SessionInfo())
    message = Message(session_id=info.id, role="assistant")
    writer.update_message(message)
    writer.append(info.id, message.id)
    call = ToolPart(session_id=info.id, message_id=message.id, call_id="c1", tool="probe",
                    state="running", input={"paths": ["a.csv"]}, metadata={"notes": {"n": 1}})
    snapshot = writer.update_part(call)

    call.metadata["notes"]["n"] = 2  # nested: a shallow copy would share this dict
    call.metadata["approval"] = "granted later"
    call.input["paths"].append("b.csv")
    writer.flush()

    stored = store.list_parts(message.id)[0]
    for row in (stored, published[0], snapshot, writer.message(message.id).parts[0]):
        assert row.metadata == {"notes": {"n": 1}}
        assert row.input == {"paths": ["a.csv"]}


def test_what_the_screen_shows_never_repeats_or_skips_text_across_checkpoints(make_forge, server):
    """A live view applies a full row (replacing what the fragments built) and then appends the
    fragments that follow, as the widget does: across checkpoint rows it must show a prefix of
    the streamed text at every moment, and all of it at the end."""
    server.add(_slow("text"))
    forge = make_forge()
    shown: dict[str, str] = {}
    problems: list[str] = []
    rows = 0

    def view(e) -> None:
        nonlocal rows
        if isinstance(e, PartUpdated) and e.part.type == "text":
            shown[e.part.id] = e.part.text
            rows += e.part.time_end is None and bool(e.part.text)
        elif isinstance(e, PartDelta) and e.part_id in shown:
            shown[e.part_id] += e.delta
        else:
            return
        for text_so_far in shown.values():
            if text_so_far and not STREAMED.startswith(text_so_far) and text_so_far != "go":
                problems.append(text_so_far[-40:])

    forge.bus.subscribe(view)
    answer = forge.session("s").prompt("go")
    assert rows >= 1  # the stream did cross a checkpoint
    assert problems == []
    assert shown[answer.parts[1].id] == STREAMED.rstrip()
