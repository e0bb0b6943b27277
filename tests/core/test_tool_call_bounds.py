"""Bounds on what the model sends: tool calls per step (the rest fail, said so), calls running
at once, a raw argument's size (1 MB) and its nesting (64 levels) — each refusal an error the
model reads, the turn going on, nothing oversized stored or sent back."""

from __future__ import annotations

import asyncio
import json

from forge_jupyter.session.tool_call import MAX_CALLS_PER_STEP, MAX_CONCURRENT_CALLS
from forge_jupyter.testing import Turn, tool_call
from forge_jupyter.tools.arguments import MAX_ARGUMENT_CHARS, MAX_ARGUMENT_DEPTH


def _stored_calls(forge, answer):
    return [p for m in forge.session(answer.session_id).messages() for p in m.tool_parts]


def _concurrency_probe(forge):
    seen = {"now": 0, "most": 0, "runs": 0}

    @forge.tool
    async def probe(n: int) -> str:
        """Wait a moment."""
        seen["now"] += 1
        seen["runs"] += 1
        seen["most"] = max(seen["most"], seen["now"])
        await asyncio.sleep(0.01)
        seen["now"] -= 1
        return f"done {n}"

    return seen


def test_three_hundred_parallel_calls_run_capped_and_bounded(make_forge, server):
    server.add(Turn([tool_call("probe", {"n": i}) for i in range(300)]), Turn.text("ok"))
    forge = make_forge(db="duckdb")
    seen = _concurrency_probe(forge)
    answer = forge.session("s").prompt("go wide")
    assert answer.text == "ok"
    assert seen["runs"] == MAX_CALLS_PER_STEP
    assert seen["most"] <= MAX_CONCURRENT_CALLS
    calls = _stored_calls(forge, answer)
    assert len(calls) == 300
    done = [p for p in calls if p.state == "completed"]
    assert [p.input["n"] for p in done] == list(range(MAX_CALLS_PER_STEP))  # call order kept
    refused = [p for p in calls if p.state == "error"]
    assert len(refused) == 300 - MAX_CALLS_PER_STEP
    assert all(f"at most {MAX_CALLS_PER_STEP} tool calls" in p.error for p in refused)
    # the model read why, in its next request
    assert "Make the rest in your next step" in json.dumps(server.requests[1].messages)


def test_calls_within_the_cap_still_run_at_most_the_bound_at_once(make_forge, server):
    server.add(Turn([tool_call("probe", {"n": i}) for i in range(MAX_CALLS_PER_STEP)]),
               Turn.text("ok"))
    forge = make_forge()
    seen = _concurrency_probe(forge)
    forge.session("s").prompt("go")
    assert seen["runs"] == MAX_CALLS_PER_STEP
    assert 1 < seen["most"] <= MAX_CONCURRENT_CALLS  # concurrent, and bounded


def test_the_cap_holds_for_every_step_of_a_run(make_forge, server):
    many = [tool_call("probe", {"n": i}) for i in range(MAX_CALLS_PER_STEP + 5)]
    server.add(Turn(many), Turn([tool_call("probe", {"n": 1000 + i})
                                 for i in range(MAX_CALLS_PER_STEP + 1)]), Turn.text("ok"))
    forge = make_forge()
    seen = _concurrency_probe(forge)
    forge.session("s").prompt("go")
    assert seen["runs"] == 2 * MAX_CALLS_PER_STEP


def _keeper(forge):
    kept = []

    @forge.tool
    def keep(data: list) -> str:
        """Keep data."""
        kept.append(data)
        return "kept"

    return kept


def test_an_argument_over_the_size_bound_fails_and_is_not_stored_or_sent_back(make_forge, server):
    big = json.dumps({"data": ["x" * (2 * MAX_ARGUMENT_CHARS)]})  # a 2 MB argument
    server.add(Turn([tool_call("keep", big)]), Turn.text("understood"))
    forge = make_forge(db="duckdb")
    kept = _keeper(forge)
    answer = forge.session("s").prompt("keep this")
    assert answer.text == "understood" and kept == []  # the turn went on; nothing ran
    call = _stored_calls(forge, answer)[0]
    assert call.state == "error"
    assert f"over the limit of {MAX_ARGUMENT_CHARS:,}" in call.error
    assert len(call.raw_input) < 1_000 and "characters in all" in call.raw_input
    assert len(json.dumps(server.requests[1].body)) < 100_000  # not 2 MB again
    assert "over the limit" in json.dumps(server.requests[1].messages)


def test_invalid_json_over_the_size_bound_is_refused_by_its_size(make_forge, server):
    server.add(Turn([tool_call("keep", "{" + "[" * (MAX_ARGUMENT_CHARS + 10))]),
               Turn.text("ok"))
    forge = make_forge(db="duckdb")
    _keeper(forge)
    answer = forge.session("s").prompt("keep")
    call = _stored_calls(forge, answer)[0]
    assert "over the limit" in call.error and len(call.raw_input) < 1_000


def test_ten_thousand_deep_arguments_fail_the_call_not_the_turn(make_forge, server):
    deep = '{"data": ' + "[" * 10_000 + "]" * 10_000 + "}"
    server.add(Turn([tool_call("keep", deep)]), Turn.text("flatter next time"))
    forge = make_forge(db="duckdb")
    kept = _keeper(forge)
    answer = forge.session("s").prompt("keep")
    assert answer.status == "completed" and answer.text == "flatter next time" and kept == []
    call = _stored_calls(forge, answer)[0]
    assert f"nest deeper than {MAX_ARGUMENT_DEPTH} levels" in call.error
    assert len(call.raw_input) < 1_000
    assert "nest deeper than" in json.dumps(server.requests[1].messages)


def test_arguments_just_past_the_depth_bound_fail_and_just_within_run(make_forge, server):
    def nested(levels: int) -> str:  # the object itself is the first level
        return '{"data": ' + "[" * (levels - 1) + "]" * (levels - 1) + "}"

    server.add(Turn([tool_call("keep", nested(MAX_ARGUMENT_DEPTH + 1)),
                     tool_call("keep", nested(MAX_ARGUMENT_DEPTH))]), Turn.text("ok"))
    forge = make_forge()
    kept = _keeper(forge)
    answer = forge.session("s").prompt("keep")
    first, second = _stored_calls(forge, answer)
    assert first.state == "error" and "nest deeper" in first.error
    assert second.state == "completed" and len(kept) == 1


def test_deep_objects_fail_as_deep_lists_do(make_forge, server):
    deep = '{"data": [' + '{"a": ' * 5_000 + "1" + "}" * 5_000 + "]}"
    server.add(Turn([tool_call("keep", deep)]), Turn.text("ok"))
    forge = make_forge()
    _keeper(forge)
    answer = forge.session("s").prompt("keep")
    assert answer.text == "ok"
    assert "nest deeper" in _stored_calls(forge, answer)[0].error
