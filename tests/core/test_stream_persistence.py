"""A model round lands as Parts with the seed's persistence split, through real litellm."""

from __future__ import annotations

import time

from forge_jupyter.bus import MessageUpdated, PartDelta, PartUpdated
from forge_jupyter.testing import Turn, reasoning, text


def test_text_streams_as_deltas_and_lands_as_one_full_row(make_forge, server):
    server.add(Turn([text("Hello there, notebook!   ", chunk=3)]))
    forge = make_forge()
    events = []
    forge.bus.subscribe(events.append)
    session = forge.session("s")

    answer = session.prompt("hi")

    assert answer.status == "completed" and answer.finish == "stop"
    assert answer.text == "Hello there, notebook!"  # trailing whitespace trimmed at the end
    deltas = [e.delta for e in events if isinstance(e, PartDelta)]
    # 9 pieces on the wire; live, a piece with no space in it waits for the next (scrubbing
    # must see a whole word before it can be shown), so the screen gets them word by word
    assert deltas == ["Hello ", "there, ", "notebook!  ", " "]
    text_rows = [e.part for e in events if isinstance(e, PartUpdated) and e.part.type == "text"
                 and e.part.message_id == answer.id]
    assert [p.text for p in text_rows] == ["", "Hello there, notebook!"]  # start, end
    stored = forge.store.get_message(answer.id)
    assert [p.type for p in stored.parts] == ["step-start", "text", "step-finish"]
    assert stored.parts[1].text == "Hello there, notebook!"


def test_deltas_are_never_written_to_the_store(make_forge, server):
    server.add(Turn([text("x" * 4000, chunk=1)]))
    forge = make_forge()
    session = forge.session("s")
    before = forge.projection.rows_written
    started = time.monotonic()
    session.prompt("go")
    took = time.monotonic() - started
    written = forge.projection.rows_written - before
    # user message + its text part + pointer, assistant + pointer + 3 parts (+ notice event),
    # + a checkpoint of the open text per second of streaming at most: 4,000 deltas, no row each
    assert written <= 12 + int(took), (written, took)


def test_reasoning_then_text_become_two_parts(make_forge, server):
    server.add(Turn([reasoning("First, think. "), text("Then answer.")]))
    forge = make_forge()
    answer = forge.session("s").prompt("q")
    kinds = [(p.type, getattr(p, "text", None)) for p in answer.parts]
    assert ("reasoning", "First, think.") in kinds and ("text", "Then answer.") in kinds
    assert [k for k, _ in kinds].index("reasoning") < [k for k, _ in kinds].index("text")


def test_step_finish_carries_usage_and_message_totals(make_forge, server):
    server.add(Turn([text("ok")], usage=(120, 7)))
    forge = make_forge(model="openai/gpt-4o-mini")  # a model litellm's price table knows
    answer = forge.session("s").prompt("q")
    finish = [p for p in answer.parts if p.type == "step-finish"][0]
    assert (finish.tokens.input, finish.tokens.output) == (120, 7)
    assert finish.tokens.estimated is False
    assert finish.cost and finish.cost > 0
    assert answer.tokens.input == 120 and answer.cost == finish.cost


def test_unknown_model_price_is_recorded_as_unknown(make_forge, server):
    server.add(Turn([text("ok")], usage=(10, 2)))
    forge = make_forge(model="openai/no-such-model-in-price-table")
    answer = forge.session("s").prompt("q")
    assert answer.status == "completed"
    assert answer.cost is None


def test_missing_usage_is_counted_locally_and_marked_estimated(make_forge, server):
    server.add(Turn([text("a short answer")], usage=None))
    forge = make_forge()
    answer = forge.session("s").prompt("count me")
    finish = [p for p in answer.parts if p.type == "step-finish"][0]
    assert finish.tokens.estimated is True
    assert finish.tokens.input > 0 and finish.tokens.output > 0


def test_message_lifecycle_is_published_on_the_bus(make_forge, server):
    server.add(Turn.text("done"))
    forge = make_forge()
    seen = []
    forge.bus.subscribe(lambda e: seen.append(e.message.status), types=MessageUpdated)
    forge.session("s").prompt("q")
    assert seen[0] == "completed"  # the user message
    assert seen[1:] == ["running", "completed"]  # the assistant skeleton, then its finish


def test_the_duckdb_store_holds_the_same_turn(make_forge, server):
    server.add(Turn.text("persisted"))
    forge = make_forge(db="duckdb")
    session = forge.session("s")
    answer = session.prompt("q")
    stored = forge.store.get_message(answer.id)
    assert stored.status == "completed" and stored.text == "persisted"
    assert [m.role for m in session.messages()] == ["user", "assistant"]
