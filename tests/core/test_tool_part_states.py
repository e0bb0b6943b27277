"""A tool call's state moves only by its transitions, each setting what that state carries."""

import pytest

from forge_jupyter.message import ToolPart


def call() -> ToolPart:
    return ToolPart(session_id="ses", message_id="msg", call_id="c1", tool="python",
                    input={"code": "1"})


def test_a_call_runs_then_completes_with_its_result():
    part = call().start(at=10.0)
    assert (part.state, part.time_start, part.time_end) == ("running", 10.0, None)
    part.complete("2", title="1", metadata={"displays": []}, at=12.5)
    assert (part.state, part.output, part.title, part.time_end) == ("completed", "2", "1", 12.5)
    assert part.metadata == {"displays": []} and part.error is None


def test_a_refused_call_starts_and_ends_at_once():
    part = call().fail("Permission denied", at=3.0, permission="denied")
    assert (part.state, part.error, part.time_start, part.time_end) == ("error", "Permission denied",
                                                                        3.0, 3.0)
    assert part.metadata == {"permission": "denied"}


def test_a_failed_running_call_keeps_its_start():
    part = call().start(at=1.0).fail("boom", at=4.0)
    assert (part.time_start, part.time_end) == (1.0, 4.0)


def test_an_interrupted_call_that_never_started_keeps_no_start():
    part = call().interrupt("aborted", at=5.0)
    assert (part.state, part.error, part.time_start, part.time_end) == ("error", "aborted", None, 5.0)


@pytest.mark.parametrize("finish", [lambda p: p.complete("ok"), lambda p: p.fail("no")])
@pytest.mark.parametrize("again", [lambda p: p.start(), lambda p: p.complete("late"),
                                   lambda p: p.fail("late"), lambda p: p.interrupt("late")])
def test_a_finished_call_never_changes(finish, again):
    part = finish(call().start())
    before = part.model_dump()
    with pytest.raises(ValueError, match="already"):
        again(part)
    assert part.model_dump() == before
