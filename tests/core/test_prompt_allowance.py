"""One allowance for the whole prompt: step_limit, budget and max_tokens bound its subagents
too, and ``task`` nesting stops at a depth limit (session/allowance.py)."""

from __future__ import annotations

import pytest

from forge_jupyter.session.allowance import MAX_TASK_DEPTH
from forge_jupyter.testing import Turn, text, tool_call
from forge_jupyter.tools.task import task_tool

# gpt-4o-mini: 20k input + 1k output tokens ≈ $0.0036 a step
PRICED = "openai/gpt-4o-mini"
STEP = (20_000, 1_000)


def _task(n: int) -> Turn:
    return Turn([tool_call("task", {"description": f"job {n}", "prompt": f"Do job {n}."})],
                usage=STEP)


def _forge(make_forge, **kw):
    forge = make_forge(db="duckdb", **kw)
    forge.add_tool(task_tool())
    return forge


def _all_assistants(forge):
    """Every assistant message in the store, of every session (the subagents' included)."""
    return [m for s in forge.store.list_sessions().items for m in forge.session(s.id).messages()
            if m.role == "assistant"]


def _recorded_cost(forge) -> float:
    return sum(m.cost or 0.0 for m in _all_assistants(forge))


def test_nested_tasks_take_their_steps_from_the_prompts_step_limit(make_forge, server):
    server.add(*[_task(i) for i in range(8)], *[Turn.text(f"answer {i}") for i in range(8)])
    forge = _forge(make_forge, step_limit=2)
    answer = forge.session("s").prompt("delegate, deeply")
    assert len(server.requests) == 2  # not 17: the parent's step and one subagent's
    assert answer.finish == "step-limit"
    assert "Stopped after 2 model steps (the step limit, subagents included)" in answer.text
    sessions = forge.store.list_sessions().items
    assert len(sessions) == 2  # the second subagent was never started
    child = next(s for s in sessions if s.parent_id)
    refused = [p for m in forge.session(child.id).messages() for p in m.tool_parts]
    assert refused and refused[0].state == "error"
    assert "Not run: Stopped after 2 model steps" in refused[0].error


def test_nested_tasks_take_their_money_from_the_prompts_budget(make_forge, server):
    server.add(*[_task(i) for i in range(8)], *[Turn.text(f"answer {i}") for i in range(8)])
    forge = _forge(make_forge, model=PRICED)
    answer = forge.session("s").prompt("delegate, deeply", budget=0.007)
    assert len(server.requests) == 2
    assert answer.finish == "budget"
    assert "budget of $0.0070 is spent" in answer.text and "subagents included" in answer.text
    # what the store records of the whole tree: at most one step past the budget
    assert 0.007 <= _recorded_cost(forge) < 0.007 + 0.004


def test_parallel_subagents_share_one_budget_while_they_stream(make_forge, server):
    parallel = Turn([tool_call("task", {"description": f"job {i}", "prompt": "Write at length."})
                     for i in range(3)], usage=STEP)
    long_answer = Turn([text("word " * 40_000, chunk=500)], chunk_delay=0.004)  # 200k chars
    server.add(parallel, long_answer, long_answer, long_answer, Turn.text("parent: done"))
    forge = _forge(make_forge, model=PRICED)
    budget = 0.01
    answer = forge.session("s").prompt("three jobs at once", budget=budget)
    assert answer.finish == "budget"
    # three children streaming 200k characters each would cost ≈ $0.09; the pool stopped them
    assert _recorded_cost(forge) <= budget * 1.2
    children = [m for m in _all_assistants(forge) if m.session_id != answer.session_id]
    assert len(children) == 3
    assert all(len(m.text) < 200_000 for m in children)
    assert any(m.finish == "budget" for m in children)
    assert len(server.requests) == 4  # the parent is not asked again once the budget ran out


def test_parallel_subagents_share_one_step_limit(make_forge, server):
    parallel = Turn([tool_call("task", {"description": f"job {i}", "prompt": "Look."})
                     for i in range(5)])
    server.add(parallel, *[Turn.text(f"child {i}") for i in range(5)], Turn.text("parent"))
    forge = _forge(make_forge, step_limit=3)
    answer = forge.session("s").prompt("five jobs at once")
    assert len(server.requests) == 3  # the parent's step and two children's; none after
    assert answer.finish == "step-limit"
    children = [m for m in _all_assistants(forge) if m.session_id != answer.session_id]
    asked = [m for m in children if m.finish != "step-limit"]
    assert len(asked) == 2
    stopped = [m for m in children if m.finish == "step-limit"]
    # a child that got no step says so, and no model was asked for it
    assert all("step limit, subagents included" in m.text for m in stopped)


def test_task_nesting_stops_at_the_depth_limit_and_the_model_reads_why(make_forge, server):
    depth = MAX_TASK_DEPTH
    server.add(*[_task(i) for i in range(depth + 1)],
               *[Turn.text(f"answer {i}") for i in range(depth + 1)])
    forge = _forge(make_forge)
    answer = forge.session("s").prompt("delegate, deeply")
    assert answer.status == "completed" and answer.text == "answer 3"
    sessions = forge.store.list_sessions().items
    assert len(sessions) == depth + 1  # the prompt's and three subagents', no fourth
    deepest = [p for m in _all_assistants(forge) for p in m.tool_parts if p.state == "error"]
    assert len(deepest) == 1
    assert f"subagents nest at most {depth} deep" in deepest[0].error
    # the deepest subagent read the refusal in its next request
    assert f"nest at most {depth} deep" in str(server.requests[depth + 1].messages)


def test_the_prompts_max_tokens_holds_in_its_subagents(make_forge, server):
    server.add(_task(0), Turn([text("x" * 40_000, chunk=400)]), Turn.text("parent: done"))
    forge = _forge(make_forge)
    answer = forge.session("s").prompt("delegate", max_tokens=50)
    assert [r.body.get("max_tokens") for r in server.requests] == [50, 50, 50]
    child = next(m for m in _all_assistants(forge) if m.session_id != answer.session_id)
    assert child.finish == "length"  # the server ignored max_tokens; forge stopped it
    assert len(child.parts[1].text) <= 50 * 8 + 400
    assert answer.text == "parent: done"


@pytest.mark.parametrize("limit", [1, 2])
def test_a_subagent_cannot_buy_a_fresh_step_limit(make_forge, server, limit):
    server.add(*[_task(i) for i in range(6)], *[Turn.text("x") for i in range(6)])
    forge = _forge(make_forge, step_limit=limit)
    forge.session("s").prompt("go")
    assert len(server.requests) == limit
