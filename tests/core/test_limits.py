"""The run always ends: step limit, doom loop, and budgets."""

from __future__ import annotations

import pytest

from forge_jupyter.errors import BudgetExceeded
from forge_jupyter.testing import Turn, tool_call


def _counter(forge):
    calls = []

    @forge.tool
    def step(n: int) -> str:
        """Record a step."""
        calls.append(n)
        return f"step {n} done"

    return calls


def test_step_limit_ends_the_run_with_a_clear_message(make_forge, server):
    for i in range(10):
        server.add(Turn([tool_call("step", {"n": i})]))
    forge = make_forge(step_limit=3)
    calls = _counter(forge)
    answer = forge.session("s").prompt("loop forever")
    assert answer.status == "completed" and answer.finish == "step-limit"
    assert "Stopped after 3 model steps" in answer.text
    assert calls == [0, 1, 2] and len(server.requests) == 3


def test_identical_tool_call_repeated_is_stopped_as_a_doom_loop(make_forge, server):
    for _ in range(6):
        server.add(Turn([tool_call("step", {"n": 7})]))
    forge = make_forge()
    calls = _counter(forge)
    answer = forge.session("s").prompt("go")
    assert answer.status == "error" and answer.finish == "doom-loop"
    assert "called 3 times in a row with the same arguments" in answer.error.message
    assert calls == [7, 7]  # the third identical call is not executed
    assert len(server.requests) == 3


def test_budget_refuses_a_prompt_whose_input_alone_costs_more(make_forge, server):
    forge = make_forge(model="openai/gpt-4o")
    session = forge.session("s")
    with pytest.raises(BudgetExceeded, match=r"more than its budget of \$0\.0000"):
        session.prompt("word " * 5000, budget=0.00001)
    assert server.requests == []
    assert session.messages() == []  # nothing was persisted


def test_budget_stops_the_run_once_step_costs_reach_it(make_forge, server):
    for i in range(5):
        server.add(Turn([tool_call("step", {"n": i})], usage=(20_000, 1_000)))
    forge = make_forge(model="openai/gpt-4o-mini")
    calls = _counter(forge)
    answer = forge.session("s").prompt("spend", budget=0.007)
    # gpt-4o-mini: 20k input + 1k output tokens ≈ $0.0036 a step → spent after two steps
    assert answer.finish == "budget" and answer.status == "completed"
    assert "budget of $0.0070 is spent" in answer.text
    assert calls == [0, 1]
    spent = sum(m.cost for m in forge.session("s").messages() if m.role == "assistant")
    assert spent >= 0.007


@pytest.mark.parametrize("budget", [0, 0.0, -1, -0.01, float("nan"), float("inf"), "0.25", True])
def test_a_budget_that_cannot_work_is_refused_naming_its_value(make_forge, server, budget):
    forge = make_forge(model="openai/gpt-4o")
    session = forge.session("s")
    with pytest.raises(ValueError) as caught:  # InvalidOption: a ForgeError and a ValueError
        session.prompt("q", budget=budget)
    message = str(caught.value)
    assert f"budget must be a number greater than 0, got {budget!r}" in message
    assert "budget=0.25" in message  # what to write instead
    assert server.requests == [] and session.messages() == []
