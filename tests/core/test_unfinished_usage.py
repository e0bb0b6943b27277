"""A round that ends before the provider reports usage still says what it cost (issue 12, item
10): what streamed is counted and marked estimated, and a model litellm's price table lacks
reads "cost unknown" — never "0 in · 0 out · $0" after words were streamed."""

from __future__ import annotations

import threading

from forge_jupyter import render
from forge_jupyter.bus import PartDelta
from forge_jupyter.testing import Turn, delay, drop, text

WORDS = " ".join(f"word{i}" for i in range(400))


def _abort_after(forge, session, deltas: int) -> None:
    seen: list[PartDelta] = []

    def watch(event) -> None:
        if isinstance(event, PartDelta):
            seen.append(event)
            if len(seen) == deltas:
                threading.Thread(target=session.abort).start()

    forge.bus.subscribe(watch)


def _stored(forge, session_id):
    """The session's last assistant message as the store holds it, not as the run returned it."""
    return [m for m in forge.store.iter_timeline(session_id) if m.role == "assistant"][-1]


def _turn(forge, session_id):
    return list(forge.store.iter_timeline(session_id))


def test_a_stopped_turn_counts_the_words_it_streamed_and_says_the_count_is_estimated(
        make_forge, server):
    server.add(Turn([text(WORDS, chunk=6)], chunk_delay=0.01))  # ~4 s if never stopped
    forge = make_forge(db="duckdb")  # openai/fake-model: not in litellm's price table
    session = forge.session("s")
    _abort_after(forge, session, 20)
    answer = session.prompt("Talk for a long time.")
    assert answer.status == "aborted"
    streamed = answer.text
    assert 10 < len(streamed.split()) < 400

    stored = _stored(forge, session.id)
    # Every "wordN" is at least one token: the count covers what streamed, no more than all.
    assert len(streamed.split()) <= stored.tokens.output < 2_000
    assert stored.tokens.input > 0
    assert stored.tokens.estimated is True
    assert stored.cost is None
    [step] = [p for p in stored.parts if p.type == "step-finish"]
    assert step.reason == "aborted" and step.tokens == stored.tokens and step.cost is None

    # What the person reads: the cell's value, the turn's record, the message's repr.
    turn = _turn(forge, session.id)
    for shown in (render.message_text(stored), render.message_html(stored),
                  render.turn_work_text(turn, with_answer=True),
                  render.turn_work_html(turn, with_answer=True)):
        assert "tokens estimated" in shown
        assert f"≈{stored.tokens.output:,} out" in shown
        assert "cost unknown" in shown
        assert "$0" not in shown and "≈0 out" not in shown
    assert "cost unknown" in repr(stored) and "$0" not in repr(stored)


def test_a_stopped_turn_of_a_priced_model_is_priced_from_the_estimate(make_forge, server):
    server.add(Turn([text(WORDS, chunk=6)], chunk_delay=0.01))
    forge = make_forge(model="gpt-4o-mini")  # in litellm's bundled price table
    session = forge.session("s")
    _abort_after(forge, session, 20)
    answer = session.prompt("Talk for a long time.")
    assert answer.status == "aborted"
    stored = _stored(forge, session.id)
    assert stored.tokens.estimated and stored.tokens.output > 0
    assert stored.cost is not None and stored.cost > 0
    assert render.money(stored.cost) in render.message_text(stored)


def test_a_stream_that_breaks_after_some_text_counts_that_text(make_forge, server):
    server.add(Turn([text("The first half of the answer arrived, then", chunk=5), drop()]))
    forge = make_forge()
    answer = forge.session("s").prompt("q")
    assert answer.status == "error" and "first half" in answer.text
    stored = _stored(forge, answer.session_id)
    assert stored.tokens.estimated and stored.tokens.output >= 8
    assert stored.cost is None
    [step] = [p for p in stored.parts if p.type == "step-finish"]
    assert step.reason == "error"
    assert "tokens estimated" in render.message_text(stored)


def test_a_turn_stopped_before_any_output_reads_cost_unknown_not_0(make_forge, server):
    server.add(Turn([delay(5), text("never shown")]))
    forge = make_forge()
    session = forge.session("s")
    threading.Timer(0.5, session.abort).start()
    answer = session.prompt("q")
    assert answer.status == "aborted" and answer.text == ""
    stored = _stored(forge, session.id)
    assert stored.tokens.output == 0
    assert stored.cost is None
    assert "$0" not in render.message_text(stored)
    assert "cost unknown" in render.message_text(stored)


def test_a_cost_no_one_could_pay_still_reads_as_words_not_a_traceback():
    """A price table's typo or an overflow gives a cost of 1e26 or inf: the message's repr,
    its record and the usage line still render (Decimal refused both before)."""
    from forge_jupyter.message import Message, Tokens

    for cost, said in [(float("inf"), "cost unknown"), (float("nan"), "cost unknown"),
                       (1e26, "$1.0e+26"), (2.25e12, "$2.3e+12"), (999_999_999_999.99,
                                                                  "$999999999999.99")]:
        message = Message(session_id="ses_x", role="assistant", status="completed",
                          tokens=Tokens(input=3, output=4), cost=cost)
        assert said in repr(message)
        assert render.usage(message.tokens, cost, "m") == f"3 in · 4 out · {said} · m"
