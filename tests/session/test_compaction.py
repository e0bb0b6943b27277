"""The compaction boundary: manual and repeated compactions, failed summaries (DESIGN §6)."""

from __future__ import annotations

import pytest

from forge_jupyter.message import ErrorInfo
from forge_jupyter.session.compaction import CONTINUE_TEXT
from forge_jupyter.session.view import filter_compacted, load_view
from forge_jupyter.testing import Turn
from tests.session.support import contents, say, shown, words

SMALL = "openai/gpt-4"


def summaries(session):
    return [m for m in session.messages() if m.summary]


def test_manual_compact_writes_a_request_a_summary_and_an_event(make_forge, server):
    server.add(say(words("a0")), say(words("a1")), say("## Goal\n" + words("S1")))
    forge = make_forge()
    session = forge.session("s")
    session.prompt(words("q0"))
    session.prompt(words("q1"))

    summary = session.compact()

    assert summary.summary and summary.status == "completed" and summary.text.startswith("## Goal")
    request = forge.store.get_message(summary.parent_id)
    [part] = request.parts
    assert (part.type, part.auto, part.reason) == ("compaction", False, "requested by the user")
    assert part.tail_start == session.messages()[2].id  # the last turn is kept verbatim
    assert session.messages()[-1].id == summary.id  # a manual compaction adds no "continue"
    [event] = forge.store.events(session.id, type="compaction").items
    assert event.data["auto"] is False and event.data["summary_message_id"] == summary.id
    assert {"tokens_before", "tokens_after", "tail_start", "extractive"} <= set(event.data)


def test_compactions_in_a_row_the_view_starts_at_the_newest_boundary(make_forge, server):
    server.add(say(words("a0")), say(words("a1")), say("## Goal\n" + words("S1")),
               say(words("a2")), say("## Goal\n" + words("S2")), say("## Goal\n" + words("S3")),
               say(words("a3")))
    forge = make_forge()
    session = forge.session("s")
    session.prompt(words("q0"))
    session.prompt(words("q1"))
    session.compact()
    session.prompt(words("q2"))
    session.compact()
    # The second summarizing call read the first summary, moved before the turns it kept.
    assert contents(server.requests[4])[:4] == [
        ("user", contents(server.requests[4])[0][1]),
        ("assistant", "## Goal\n" + words("S1")),
        ("user", words("q1")), ("assistant", words("a1"))]
    s3 = session.compact()  # right after the second: nothing new to keep as a tail
    assert forge.store.get_message(s3.parent_id).parts[0].tail_start is None
    session.prompt(words("q3"))

    last = server.requests[-1]
    assert contents(last)[1:] == [("assistant", "## Goal\n" + words("S3")), ("user", words("q3"))]
    assert "S1-0" not in shown(last) and "S2-0" not in shown(last) and "q2-0" not in shown(last)
    view, start = load_view(forge.store, session.id)
    assert view[0].id == s3.parent_id
    assert start == forge.store.position(session.id, s3.parent_id)
    assert len(summaries(session)) == 3


def test_the_summarizing_call_failing_writes_an_extractive_summary_and_the_run_completes(
        make_forge, server):
    server.add(say(words("a0"), usage=(500, 40)), say(words("a1"), usage=(3_200, 40)),
               *[Turn.error(500, "summarizer down")] * 4,  # the fixture retries 4 times
               say(words("a2"), usage=(600, 40)))
    forge = make_forge(model=SMALL)
    session = forge.session("s")
    session.prompt(words("q0"))
    session.prompt(words("q1"))
    answer = session.prompt(words("q2"))

    assert answer.status == "completed" and answer.text == words("a2")
    assert len(server.requests) == 2 + 4 + 1
    failed, extractive = summaries(session)
    assert failed.status == "error" and "gave up after 4 attempts" in failed.error.message
    assert extractive.status == "completed" and extractive.metadata["extractive"] is True
    assert extractive.parent_id == failed.parent_id
    text = extractive.text
    assert "Extractive summary" in text
    assert words("q0") in text  # the goal: the first request, verbatim
    assert text.endswith(words("q2"))  # the latest instruction, verbatim
    [event] = forge.store.events(session.id, type="compaction").items
    assert event.data["extractive"] is True and event.data["summary_message_id"] == extractive.id

    # The model reads the extractive summary, then the kept tail, then "continue".
    assert contents(server.requests[-1])[1:] == [
        ("assistant", text), ("user", words("q1")), ("assistant", words("a1")),
        ("user", words("q2")), ("user", CONTINUE_TEXT)]


def test_a_failed_summary_is_not_a_boundary(make_forge, server, rows):
    server.add(say("fine"))
    forge = make_forge()
    session = forge.session("s")
    w = rows(forge.store, session.id)
    q0 = w.user(words("q0"))
    w.assistant(q0, words("a0"))
    ask = w.compaction()
    w.assistant(ask, words("half a summary"), status="error", summary=True,
                error=ErrorInfo(type="APIError", message="boom"))

    everything = list(forge.store.iter_timeline(session.id))
    assert filter_compacted(reversed(everything)) == everything
    assert load_view(forge.store, session.id) == (everything, 0)

    session.prompt(words("q1"))
    # The model sees the whole history — without the failed summary or the unanswered request.
    assert contents(server.requests[0]) == [
        ("user", words("q0")), ("assistant", words("a0")), ("user", words("q1"))]


@pytest.mark.parametrize("status", ["aborted", "interrupted", "running"])
def test_an_unfinished_summary_is_not_a_boundary_either(make_forge, rows, status):
    forge = make_forge()
    session = forge.session("s")
    w = rows(forge.store, session.id)
    q0 = w.user("q0")
    w.assistant(q0, "a0")
    ask = w.compaction()
    w.assistant(ask, "partial", status=status, summary=True,
                finish="aborted" if status == "aborted" else None)
    everything = list(forge.store.iter_timeline(session.id))
    assert load_view(forge.store, session.id) == (everything, 0)
