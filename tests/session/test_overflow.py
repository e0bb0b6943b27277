"""Overflow detection before each model call, and the compaction it triggers (DESIGN §6)."""

from __future__ import annotations

import pytest

from forge_jupyter.session.compaction import CONTINUE_TEXT, SUMMARY_INSTRUCTIONS, prompt_tokens
from forge_jupyter.session.view import load_view
from forge_jupyter.testing import Turn, http_error
from tests.session.support import contents, say, shown, words

SMALL = "openai/gpt-4"  # litellm knows it: 8,192 in, 4,096 out → usable (8192 − 4096) × 0.8 = 3,276


def compactions(forge, session):
    return forge.store.events(session.id, type="compaction").items


@pytest.mark.parametrize("db", [":memory:", "duckdb"])
def test_crossing_the_window_compacts_once_and_the_next_request_starts_at_the_summary(
        make_forge, server, db):
    # Four quiet turns, the fourth reporting a prompt near the window: the fifth prompt
    # must compact before it reaches the model.
    for i in range(4):
        server.add(say(words(f"answer{i}"), usage=(3_100 if i == 3 else 600, 40)))
    server.add(say("## Goal\n" + words("SUMMARY"), usage=(900, 120)),
               say(words("answer4"), usage=(700, 30)),
               say(words("answer5"), usage=(800, 30)))
    forge = make_forge(db, model=SMALL)
    session = forge.session("long")
    for i in range(4):
        session.prompt(words(f"question{i}"))
    assert compactions(forge, session) == []
    assert len(server.requests) == 4

    answer = session.prompt(words("question4"))
    assert answer.text == words("answer4")
    assert len(compactions(forge, session)) == 1
    summarize, after = server.requests[4], server.requests[5]

    # The summarizing call saw what it summarizes — not the two turns kept verbatim.
    assert summarize.tools == []
    assert contents(summarize)[-1][1].startswith(SUMMARY_INSTRUCTIONS)
    assert "question0-0" in shown(summarize) and "answer2-0" in shown(summarize)
    assert "question4-0" not in shown(summarize).split(SUMMARY_INSTRUCTIONS[:40])[0]

    # The next request: the boundary, then the kept tail verbatim, then the continuation.
    seen = shown(after)
    assert "SUMMARY-0" in seen and CONTINUE_TEXT in seen
    for gone in ("question0", "answer0", "question1", "answer1", "question2", "answer2"):
        assert f"{gone}-0" not in seen
    assert contents(after)[1:] == [
        ("assistant", "## Goal\n" + words("SUMMARY")),
        ("user", words("question3")), ("assistant", words("answer3")),
        ("user", words("question4")), ("user", CONTINUE_TEXT)]

    # A later prompt stays behind the boundary, and no second compaction happens.
    session.prompt(words("question5"))
    assert len(compactions(forge, session)) == 1
    assert "question0-0" not in shown(server.requests[6]) and "SUMMARY-0" in shown(server.requests[6])

    # Nothing was deleted: every raw message is still in the store.
    stored = " ".join(m.text for m in session.messages())
    for i in range(6):
        assert f"question{i}-0" in stored and f"answer{i}-0" in stored
    [summary] = [m for m in session.messages() if m.summary]
    event = compactions(forge, session)[0].data
    assert event["auto"] is True and event["reason"] == "context overflow"
    assert event["summary_message_id"] == summary.id and event["extractive"] is False
    assert event["tokens_before"] > event["tokens_after"] > 0
    view, start = load_view(forge.store, session.id)
    assert view[0].text == words("question3") and start == 6


def test_the_check_charges_the_compaction_prompt_itself(make_forge, server):
    # 3,060 + 40 measured is under 3,276; the compaction prompt's own cost (~170) is not.
    assert 3_100 + 40 < 3_276 < 3_100 + 40 + prompt_tokens()
    server.add(say(words("a0"), usage=(3_100, 40)), say("## Goal\nsum", usage=(10, 10)),
               say(words("a1"), usage=(10, 10)))
    forge = make_forge(model=SMALL)
    session = forge.session("s")
    session.prompt(words("q0"))
    session.prompt("q1")
    assert len(compactions(forge, session)) == 1


def test_a_short_follow_up_under_the_window_does_not_compact(make_forge, server):
    server.add(say(words("a0"), usage=(2_500, 40)), say(words("a1"), usage=(2_600, 40)))
    forge = make_forge(model=SMALL)
    session = forge.session("s")
    session.prompt("q0")
    session.prompt("q1")
    assert compactions(forge, session) == []
    assert len(server.requests) == 2


def test_a_model_litellm_does_not_know_uses_the_character_budget(make_forge, server):
    # fake-model has no entry in litellm's table: 10,000 characters × 0.8 is the budget.
    for i in range(6):
        server.add(say(words(f"answer{i}", 150)))
    forge = make_forge(char_budget=10_000)
    session = forge.session("s")
    n = 0
    while not compactions(forge, session):
        n += 1
        session.prompt(words(f"question{n}", 20))
        assert n < 6, "the character budget never triggered a compaction"
    assert len(compactions(forge, session)) == 1
    request = server.requests[-1]  # the continuation after the summary
    assert contents(request)[-1] == ("user", CONTINUE_TEXT)
    assert "question1-0" not in shown(request)
    assert len(shown(request)) < 8_000


def test_a_provider_context_window_error_compacts_instead_of_failing(make_forge, server):
    too_long = ("This model's maximum context length is 8192 tokens. However, your messages "
                "resulted in 9120 tokens. Please reduce the length of the messages.")
    server.add(say(words("a0")), say(words("a1")),
               Turn([http_error(400, too_long, error_type="invalid_request_error")]),
               say("## Goal\n" + words("SUMMARY")), say(words("a2")))
    forge = make_forge()
    session = forge.session("s")
    session.prompt(words("q0"))
    session.prompt(words("q1"))
    answer = session.prompt(words("q2"))

    assert answer.status == "completed" and answer.text == words("a2")
    assert len(server.requests) == 5  # the 400 was not retried
    failed = next(m for m in session.messages() if m.status == "error")
    # litellm mapped the wording to its ContextWindowExceededError; the loop compacted.
    assert failed.error.type == "context_window"
    assert "ContextWindowExceededError" in failed.error.message
    [event] = compactions(forge, session)
    assert event.data["reason"] == "the provider reported a context-window overflow"
    assert "SUMMARY-0" in shown(server.requests[4])


def test_a_400_without_the_context_wording_is_an_error_not_a_compaction(make_forge, server):
    server.add(Turn([http_error(400, "Invalid value for 'temperature'")]))
    forge = make_forge()
    session = forge.session("s")
    answer = session.prompt("q")
    assert answer.status == "error" and compactions(forge, session) == []


def test_a_tool_output_that_fills_the_window_compacts_before_the_model_reads_it(make_forge, server):
    from forge_jupyter.testing import tool_call

    server.add(Turn([tool_call("dump", {})], usage=(600, 20)),
               say("## Goal\n" + words("SUMMARY")), say("done", usage=(700, 10)))
    forge = make_forge(model=SMALL)

    @forge.tool
    def dump() -> str:
        """Print a lot."""
        return words("row", 2_000)  # ~4,000 tokens: measured 620 + this > the 3,276 window

    session = forge.session("s")
    answer = session.prompt("dump it")
    assert answer.text == "done"
    assert len(compactions(forge, session)) == 1
    summarize, after = server.requests[1], server.requests[2]
    assert "row-1999" in shown(summarize)
    assert "row-1999" not in shown(after) and "SUMMARY-0" in shown(after)
