"""A streaming step is stopped by forge itself past its cap — max_tokens (estimated), what is
left of the budget, or the absolute cap — so a server that ignores max_tokens cannot stream
forever; the stop is recorded like ``finish=length`` and marked as forge's."""

from __future__ import annotations

from forge_jupyter.message import StepFinishPart
from forge_jupyter.session.step_cap import LOCAL_MARGIN, OUTPUT_CAP_CHARS
from forge_jupyter.testing import Turn, reasoning, text, tool_call


def _step_finish(message) -> StepFinishPart:
    return next(p for p in message.parts if isinstance(p, StepFinishPart))


def _stored(forge, answer):
    return next(m for m in forge.session(answer.session_id).messages() if m.id == answer.id)


def test_a_server_that_ignores_max_tokens_is_stopped_by_forge(make_forge, server):
    server.add(Turn([text("y" * 40_000, chunk=40)]))  # 40k characters and still going
    forge = make_forge(db="duckdb")
    answer = forge.session("s").prompt("write", max_tokens=100)
    stored = _stored(forge, answer)
    assert stored.finish == "length" and stored.status == "completed"
    reply = stored.parts[1].text
    assert 100 * 4 < len(reply) <= 100 * 4 * LOCAL_MARGIN + 40
    finish = _step_finish(stored)
    assert finish.stopped_by_forge == "max_tokens" and finish.reason == "length"
    assert finish.tokens.estimated
    assert "stopped by forge: past 100 tokens by its estimate" in stored.text
    assert len(server.requests) == 1


def test_a_compliant_reply_within_max_tokens_is_never_cut(make_forge, server):
    server.add(Turn([text("word " * 200)]))  # 1,000 characters: within max_tokens=300
    forge = make_forge()
    answer = forge.session("s").prompt("write", max_tokens=300)
    assert answer.finish == "stop" and answer.text == ("word " * 200).strip()
    assert _step_finish(answer).stopped_by_forge is None


def test_reasoning_that_ignores_max_tokens_is_stopped_too(make_forge, server):
    server.add(Turn([reasoning("hmm " * 20_000, chunk=80), text("never reached")]))
    forge = make_forge()
    answer = forge.session("s").prompt("think", max_tokens=64)
    assert answer.finish == "length"
    thought = next(p for p in answer.parts if p.type == "reasoning")
    assert len(thought.text) <= 64 * 4 * LOCAL_MARGIN + 80
    assert "never reached" not in answer.text
    assert _step_finish(answer).stopped_by_forge == "max_tokens"


def test_tool_arguments_streaming_past_the_cap_stop_the_step_and_run_nothing(make_forge, server):
    ran = []
    server.add(Turn([tool_call("note", {"text": "z" * 50_000}, fragments=500)]))
    forge = make_forge(db="duckdb")

    @forge.tool
    def note(text: str) -> str:
        """Keep a note."""
        ran.append(text)
        return "kept"

    answer = forge.session("s").prompt("note", max_tokens=100)
    stored = _stored(forge, answer)
    assert stored.finish == "length" and ran == []
    call = stored.tool_parts[0]
    assert call.state == "error" and "Not run: the reply was cut off" in call.error
    assert len(call.raw_input) < 2_000  # the arguments forge had read when it stopped
    assert _step_finish(stored).stopped_by_forge == "max_tokens"


def test_the_models_own_output_limit_caps_a_step_without_max_tokens(make_forge, server):
    # gpt-4o writes at most 16,384 tokens a step; a server that goes on is stopped at twice that
    server.add(Turn([text("w" * 300_000, chunk=3000)]))
    forge = make_forge(model="openai/gpt-4o")
    answer = forge.session("s").prompt("write")
    assert answer.finish == "length"
    assert len(answer.parts[1].text) <= 16_384 * 4 * LOCAL_MARGIN + 3000
    assert _step_finish(answer).stopped_by_forge == "max_tokens"


def test_a_model_with_no_known_limit_is_stopped_at_the_absolute_cap(make_forge, server):
    server.add(Turn([text("v" * (OUTPUT_CAP_CHARS + 200_000), chunk=100_000)], usage=None))
    forge = make_forge()  # openai/fake-model: litellm knows no output limit for it
    answer = forge.session("s").prompt("write")
    assert answer.finish == "length"
    assert OUTPUT_CAP_CHARS < len(answer.parts[1].text) <= OUTPUT_CAP_CHARS + 100_000
    assert _step_finish(answer).stopped_by_forge == "output-cap"
    assert "its cap of 4,000,000 characters for one model step" in answer.text


def test_a_long_single_step_is_stopped_where_the_budget_runs_out(make_forge, server):
    # gpt-4o-mini writes at $0.60 a million tokens: 400k characters ≈ $0.06
    server.add(Turn([text("word " * 80_000, chunk=500)]))
    forge = make_forge(db="duckdb", model="openai/gpt-4o-mini")
    answer = forge.session("s").prompt("write at length", budget=0.005)
    stored = _stored(forge, answer)
    assert stored.finish == "budget"
    assert len(stored.parts[1].text) < 400_000
    assert stored.cost is not None and stored.cost <= 0.005 * 1.1
    assert _step_finish(stored).stopped_by_forge == "budget"
    assert "Stopped by forge mid-reply: this prompt's budget of $0.0050 is spent" in stored.text
    assert len(server.requests) == 1


def test_an_anthropic_route_that_ignores_max_tokens_is_stopped_too(make_forge, server):
    server.add(Turn([text("a" * 30_000, chunk=60)]))
    forge = make_forge(db="duckdb", protocol="anthropic")
    answer = forge.session("s").prompt("write", max_tokens=128)
    stored = _stored(forge, answer)
    assert stored.finish == "length"
    assert len(stored.parts[1].text) <= 128 * 4 * LOCAL_MARGIN + 60
    assert _step_finish(stored).stopped_by_forge == "max_tokens"
