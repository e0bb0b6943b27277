"""Tool calls inside the loop: execution, order, concurrency, and every kind of bad call."""

from __future__ import annotations

import asyncio

from forge_jupyter.testing import Turn, text, tool_call


def tool_messages(request) -> list[dict]:
    return [m for m in request.messages if m.get("role") == "tool"]


def test_tool_call_runs_and_the_model_reads_its_result(make_forge, server):
    server.add(Turn([tool_call("add", {"a": 2, "b": 3}, fragments=5)]), Turn.text("It is 5."))
    forge = make_forge()

    @forge.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    answer = forge.session("s").prompt("2+3?")
    assert answer.text == "It is 5."
    first = forge.session("s").messages()[1]
    [call] = first.tool_parts
    assert (call.tool, call.state, call.input, call.output) == ("add", "completed", {"a": 2, "b": 3}, "5")
    assert call.time_start is not None and call.time_end >= call.time_start
    assert server.requests[0].tools == ["add"]
    assert tool_messages(server.requests[1]) == [
        {"role": "tool", "tool_call_id": call.call_id, "content": "5"}]


def test_parallel_calls_run_concurrently_and_keep_call_order(make_forge, server):
    server.add(Turn([tool_call("wait_for", {"name": "a", "other": "b"}),
                     tool_call("wait_for", {"name": "b", "other": "a"})]),
               Turn.text("both done"))
    forge = make_forge()
    started: dict[str, asyncio.Event] = {}

    @forge.tool
    async def wait_for(name: str, other: str) -> str:
        """Start, then wait until the other call has started too (deadlocks if run in series)."""
        started.setdefault(name, asyncio.Event()).set()
        await asyncio.wait_for(started.setdefault(other, asyncio.Event()).wait(), 5)
        return f"{name} saw {other}"

    forge.session("s").prompt("go")
    calls = forge.session("s").messages()[1].tool_parts
    assert [c.output for c in calls] == ["a saw b", "b saw a"]
    assert [m["content"] for m in tool_messages(server.requests[1])] == ["a saw b", "b saw a"]


def test_malformed_json_arguments_become_a_tool_error_the_model_sees(make_forge, server):
    server.add(Turn([tool_call("add", '{"a": 1, "b": ')]), Turn.text("sorry"))
    forge = make_forge()

    @forge.tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    answer = forge.session("s").prompt("go")
    assert answer.text == "sorry"
    [call] = forge.session("s").messages()[1].tool_parts
    assert call.state == "error" and "not valid JSON" in call.error
    assert call.raw_input == '{"a": 1, "b": '
    [seen] = tool_messages(server.requests[1])
    assert seen["content"].startswith("Error: The arguments for add are not valid JSON")


def test_arguments_failing_the_schema_become_a_tool_error(make_forge, server):
    server.add(Turn([tool_call("add", {"a": "one"})]), Turn.text("retrying"))
    forge = make_forge()

    @forge.tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    forge.session("s").prompt("go")
    [call] = forge.session("s").messages()[1].tool_parts
    assert call.state == "error"
    assert "'b' is a required property" in call.error and "'one' is not of type 'integer'" in call.error
    assert "Invalid arguments for add" in tool_messages(server.requests[1])[0]["content"]


def test_unknown_tool_becomes_a_tool_error_naming_the_available_tools(make_forge, server):
    server.add(Turn([tool_call("delete_everything", {})]), Turn.text("ok"))
    forge = make_forge()

    @forge.tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    answer = forge.session("s").prompt("go")
    assert answer.status == "completed"
    [call] = forge.session("s").messages()[1].tool_parts
    assert call.state == "error" and "Unknown tool 'delete_everything'" in call.error
    assert "Available tools: add" in call.error


def test_a_flagged_tool_called_without_its_flag_says_why_and_a_denied_one_is_unknown(
        make_forge, server):
    from forge_jupyter.tools.notebook_edit import FLAG, NEEDS_PAGE

    forge = make_forge(builtin_tools=True)
    server.add(Turn([tool_call("notebook_insert", {"source": "x = 1"})]), Turn.text("ok"))
    forge.session("no-page").prompt("go")  # no page: the cells flag is off
    [call] = forge.session("no-page").messages()[1].tool_parts
    assert call.state == "error" and call.error == NEEDS_PAGE

    # flag on, but denied for this prompt (as a comparison's read-only runs are): no "needs
    # JupyterLab", which would be untrue in JupyterLab — the plain unknown-tool answer
    forge.flags = forge.flags | {FLAG}
    for spelled in ("notebook_insert", "notebook_delete"):
        server.add(Turn([tool_call(spelled, {"cell_id": "c1", "source": "x"})]), Turn.text("ok"))
        forge.session(spelled).prompt("go", permissions=[f"{spelled}:*=deny"])
        [call] = forge.session(spelled).messages()[1].tool_parts
        assert call.state == "error" and f"Unknown tool {spelled!r}" in call.error, call.error


def test_a_tool_that_raises_is_reported_to_the_model(make_forge, server):
    server.add(Turn([tool_call("boom", {})]), Turn.text("it failed"))
    forge = make_forge()

    @forge.tool
    def boom() -> str:
        """Always fails."""
        raise ValueError("the disk is full")

    forge.session("s").prompt("go")
    [call] = forge.session("s").messages()[1].tool_parts
    assert call.state == "error" and call.error == "ValueError: the disk is full"


def test_a_tool_past_its_timeout_is_stopped(make_forge, server):
    server.add(Turn([tool_call("slow", {})]), Turn.text("too slow"))
    forge = make_forge()

    @forge.tool(timeout=0.2)
    async def slow() -> str:
        """Sleeps."""
        await asyncio.sleep(30)
        return "never"

    forge.session("s").prompt("go")
    [call] = forge.session("s").messages()[1].tool_parts
    assert call.state == "error" and "did not finish within 0.2 s" in call.error


def test_provider_saying_stop_with_an_unexecuted_tool_call_does_not_end_the_loop(make_forge, server):
    server.add(Turn([text("Let me check."), tool_call("add", {"a": 1, "b": 1})], finish="stop"),
               Turn.text("Two."))
    forge = make_forge()

    @forge.tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    answer = forge.session("s").prompt("1+1")
    assert answer.text == "Two."
    first = forge.session("s").messages()[1]
    assert first.finish == "tool-calls" and first.tool_parts[0].output == "2"
    assert len(server.requests) == 2


def test_prompt_tools_toggle_removes_a_tool_for_that_prompt_only(make_forge, server):
    server.add(Turn.text("one"), Turn.text("two"))
    forge = make_forge()

    @forge.tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    s = forge.session("s")
    s.prompt("a", tools={"add": False})
    s.prompt("b")
    assert server.requests[0].tools == [] and server.requests[1].tools == ["add"]
