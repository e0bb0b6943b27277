"""Turns as OpenTelemetry GenAI spans, exported over OTLP/HTTP to a receiver on loopback that
decodes them with OpenTelemetry's own proto classes; real litellm against the fake server."""

from __future__ import annotations

import sys

import pytest

from forge_jupyter.session.retry import RetryPolicy
from forge_jupyter.testing import Turn, tool_call
from tests.tracing.receiver import Receiver

CONTENT = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
CONTENT_KEYS = ("gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.arguments",
                "gen_ai.tool.call.result", "exception.message")


@pytest.fixture(scope="module")
def receiver():
    with Receiver() as r:
        yield r


@pytest.fixture
def traced(make_forge, receiver, monkeypatch):
    """A Forge exporting to the receiver (the standard variables), the receiver cleared."""
    receiver.clear()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
    monkeypatch.setenv("OTEL_SERVICE_NAME", "forge-tests")
    monkeypatch.delenv(CONTENT, raising=False)

    def make(**kw):
        forge = make_forge(tracing="otlp", **kw)

        @forge.tool
        def add(a: int, b: int) -> int:
            """Add two integers."""
            return a + b

        return forge

    return make


def exported(forge, receiver, name="invoke_agent", count=1):
    forge.services.tracer.provider.force_flush()
    return receiver.wait_for(name, count)


def by_name(spans, prefix):
    return [s for s in spans if s.name.split(" ")[0] == prefix]


def test_a_turn_with_a_tool_call_is_an_agent_span_over_chat_and_tool_spans(traced, receiver, server):
    server.add(Turn([tool_call("add", {"a": 2, "b": 3})]), Turn.text("It is 5."))
    forge = traced()
    answer = forge.session("s").prompt("2+3? my key is sk-abcdefghijklmnopqrstuvwxyz0123")
    assert answer.text == "It is 5."
    spans = exported(forge, receiver)
    [agent] = by_name(spans, "invoke_agent")
    chats = sorted(by_name(spans, "chat"), key=lambda s: s.start)
    [tool] = by_name(spans, "execute_tool")
    assert agent.parent_id == "" and agent.name == "invoke_agent build"
    assert agent.resource["service.name"] == "forge-tests"
    assert agent.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert agent.attributes["gen_ai.conversation.id"] == answer.session_id
    assert agent.attributes["gen_ai.agent.name"] == "build"
    assert agent.attributes["gen_ai.usage.output_tokens"] == sum(
        c.attributes["gen_ai.usage.output_tokens"] for c in chats)
    assert len(chats) == 2 and {c.parent_id for c in chats} == {agent.span_id}
    assert {s.trace_id for s in spans} == {agent.trace_id}
    for chat in chats:
        a = chat.attributes
        assert chat.name == "chat fake-model" and chat.kind == 3  # SPAN_KIND_CLIENT
        assert a["gen_ai.operation.name"] == "chat"
        assert a["gen_ai.request.model"] == "fake-model"
        assert a["gen_ai.response.model"] == "fake-model"
        assert a["gen_ai.provider.name"] == a["gen_ai.system"] == "openai"
        assert a["gen_ai.usage.input_tokens"] > 0 and a["gen_ai.usage.output_tokens"] > 0
        assert chat.start <= chat.end
    assert [c.attributes["gen_ai.response.finish_reasons"] for c in chats] == [
        ["tool-calls"], ["stop"]]
    call = forge.session("s").messages()[1].tool_parts[0]
    assert tool.name == "execute_tool add" and tool.parent_id == agent.span_id
    assert tool.attributes["gen_ai.tool.name"] == "add"
    assert tool.attributes["gen_ai.tool.call.id"] == call.call_id
    assert tool.attributes["forge.tool.state"] == "completed"
    assert tool.status != 2
    # no content without the conventions' switch: not the prompt, the answer, nor the tool's
    for s in spans:
        assert not set(CONTENT_KEYS) & s.attributes.keys(), (s.name, s.attributes)
        assert "It is 5." not in repr(s.attributes) and "2+3?" not in repr(s.attributes)


def test_a_failing_model_call_is_an_exception_event_with_its_retries(traced, receiver, server):
    for _ in range(2):
        server.add(Turn.error(500, "upstream exploded"))
    forge = traced(retry=RetryPolicy(max_attempts=2, base_delay=0.01, max_delay=0.02))
    answer = forge.session("f").prompt("q")
    assert answer.status == "error"
    spans = exported(forge, receiver)
    [agent] = by_name(spans, "invoke_agent")
    [chat] = by_name(spans, "chat")
    retries = by_name(spans, "retry")
    assert agent.status == 2 and chat.status == 2  # STATUS_CODE_ERROR
    assert chat.parent_id == agent.span_id
    [(event, attrs)] = chat.events
    assert event == "exception" and attrs["exception.type"] == answer.error.type
    # a model server's own words (scrubbed like every row), not the person's content
    assert "upstream exploded" in attrs["exception.message"]
    assert chat.attributes["error.type"] == answer.error.type
    assert [r.parent_id for r in retries] == [chat.span_id]
    assert retries[0].attributes["forge.retry.attempt"] == 1
    assert retries[0].events[0][0] == "exception"


def test_content_only_with_the_switch_and_scrubbed(traced, receiver, server, monkeypatch):
    monkeypatch.setenv(CONTENT, "true")
    server.add(Turn([tool_call("add", {"a": 2, "b": 3})]), Turn.text("It is 5."))
    forge = traced()
    secret = "sk-abcdefghijklmnopqrstuvwxyz0123"
    forge.session("c").prompt(f"2+3? my key is {secret}")
    spans = exported(forge, receiver)
    [agent] = by_name(spans, "invoke_agent")
    [tool] = by_name(spans, "execute_tool")
    assert "2+3?" in agent.attributes["gen_ai.input.messages"]
    assert "It is 5." in agent.attributes["gen_ai.output.messages"]
    assert '"a": 2' in tool.attributes["gen_ai.tool.call.arguments"]
    assert tool.attributes["gen_ai.tool.call.result"] == "5"
    assert all(secret not in repr(s.attributes) for s in spans)


def test_a_compaction_is_a_span_holding_its_summary_step(traced, receiver, server):
    server.add(Turn.text("first answer"), Turn.text("the summary"))
    forge = traced()
    s = forge.session("k")
    s.prompt("first")
    exported(forge, receiver)
    receiver.clear()
    s.compact()
    spans = exported(forge, receiver, "compaction")
    [compaction] = by_name(spans, "compaction")
    [agent] = by_name(spans, "invoke_agent")
    assert compaction.parent_id == agent.span_id
    assert [c.parent_id for c in by_name(spans, "chat")] == [compaction.span_id]


def test_a_subagent_turn_hangs_under_the_task_call_that_started_it(traced, receiver, server):
    server.add(Turn([tool_call("task", {"description": "count", "prompt": "Count to three."})]),
               Turn.text("one, two, three"), Turn.text("The subagent counted."))
    forge = traced(builtin_tools=True)
    answer = forge.session("p").prompt("delegate")
    assert answer.text == "The subagent counted."
    spans = exported(forge, receiver, "invoke_agent", 2)
    agents = {s.attributes["gen_ai.agent.name"]: s for s in by_name(spans, "invoke_agent")}
    [task] = [s for s in by_name(spans, "execute_tool") if s.name == "execute_tool task"]
    assert agents["build"].parent_id == "" and task.parent_id == agents["build"].span_id
    assert agents["plan"].parent_id == task.span_id
    assert agents["plan"].trace_id == agents["build"].trace_id
    assert agents["plan"].attributes["gen_ai.conversation.id"] != answer.session_id
    [child_chat] = [c for c in by_name(spans, "chat") if c.parent_id == agents["plan"].span_id]
    assert child_chat.attributes["gen_ai.usage.output_tokens"] > 0


def test_tracing_takes_whole_rows_so_the_stream_builds_no_deltas_for_it(traced):
    from forge_jupyter.bus import PartDelta, PartUpdated

    forge = traced()
    assert forge.bus.wants(PartUpdated) and not forge.bus.wants(PartDelta)
    unsubscribe = forge.bus.subscribe(lambda e: None, types=PartDelta)  # a widget, say
    assert forge.bus.wants(PartDelta)
    unsubscribe()
    assert not forge.bus.wants(PartDelta)


def test_without_the_sdk_turning_it_on_says_what_to_install_and_leaves_it_off(
        make_forge, monkeypatch):
    from forge_jupyter.errors import InvalidOption

    forge = make_forge()
    monkeypatch.setitem(sys.modules, "opentelemetry.sdk", None)  # as if the extra were missing
    with pytest.raises(InvalidOption, match=r"pip install 'forge-jupyter\[otel\]'"):
        forge.configure({"tracing": "otlp"})
    assert (forge.tracing, forge.tracer) == ("off", None)
    with pytest.raises(InvalidOption, match="not one of off, otlp, global"):
        forge.configure({"tracing": "jaeger"})
