"""The fake model server, reached by real litellm over loopback HTTP on both protocols."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import time

import pytest

from forge_jupyter.testing import (
    DEMO_ANNOUNCEMENT,
    FakeModelServer,
    Turn,
    delay,
    drop,
    http_error,
    reasoning,
    text,
    tool_call,
)

PROTOCOLS = ["openai", "anthropic"]
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


def tool(name: str, **properties: str) -> dict:
    props = {k: {"type": v} for k, v in properties.items()}
    return {
        "type": "function",
        "function": {"name": name, "parameters": {"type": "object", "properties": props}},
    }


def contents(streamed) -> list[str]:
    return [
        c.choices[0].delta.content
        for c in streamed.chunks
        if c.choices and c.choices[0].delta.content
    ]


@pytest.fixture
def server():
    with FakeModelServer() as s:
        yield s


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_text_arrives_in_chunks_of_the_requested_size(server, stream, protocol):
    server.add(Turn([text("Hello world", chunk=5)]))
    out = stream(server, protocol)
    assert out.error is None
    assert contents(out) == ["Hello", " worl", "d"]
    assert out.finish_reason == "stop"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_reasoning_streams_before_text(server, stream, protocol):
    server.add(Turn([reasoning("Let me think.", signature="sig-123"), text("42")]))
    out = stream(server, protocol)
    assert (out.reasoning, out.text) == ("Let me think.", "42")
    if protocol == "anthropic":  # the thinking block's signature reaches litellm's thinking_blocks
        blocks = [
            b
            for c in out.chunks
            if c.choices
            for b in (getattr(c.choices[0].delta, "thinking_blocks", None) or [])
        ]
        assert {"type": "thinking", "thinking": "", "signature": "sig-123", "index": 0} in blocks


def test_openai_tool_call_fragments_look_like_openai_and_reassemble_by_index(server, stream):
    server.add(Turn([tool_call("get_weather", {"city": "Paris"}, id="call_abc", fragments=3)]))
    out = stream(server, "openai", tools=[WEATHER])
    frags = [tc for c in out.chunks if c.choices for tc in c.choices[0].delta.tool_calls or []]
    assert len(frags) == 4  # the opening fragment, then three pieces of arguments
    assert (frags[0].id, frags[0].function.name, frags[0].function.arguments) == (
        "call_abc",
        "get_weather",
        "",
    )
    assert all(f.id is None and f.index == 0 for f in frags[1:])
    assert out.tool_calls == {
        0: {"id": "call_abc", "name": "get_weather", "arguments": '{"city": "Paris"}'}
    }
    assert out.finish_reason == "tool_calls"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_parallel_tool_calls_get_indexes_in_order(server, stream, protocol):
    server.add(
        Turn([text("Checking."), *(tool_call("get_weather", {"city": c}) for c in ("A", "B", "C"))])
    )
    out = stream(server, protocol, tools=[WEATHER])
    assert sorted(out.tool_calls) == [0, 1, 2]
    assert [json.loads(c["arguments"])["city"] for c in out.tool_calls.values()] == ["A", "B", "C"]
    prefix = "toolu_" if protocol == "anthropic" else "call_"
    ids = [c["id"] for c in out.tool_calls.values()]
    assert len(set(ids)) == 3 and all(i.startswith(prefix) for i in ids)
    assert out.finish_reason == "tool_calls"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_malformed_tool_arguments_arrive_verbatim(server, stream, protocol):
    server.add(Turn([tool_call("get_weather", '{"city": "Ber', fragments=2)]))
    out = stream(server, protocol, tools=[WEATHER])
    assert out.error is None
    assert out.tool_calls[0]["arguments"] == '{"city": "Ber'


def test_openai_usage_comes_in_a_final_chunk_with_no_choices(server, stream):
    server.add(
        Turn.text("Hi", usage={"prompt": 100, "completion": 7, "cache_read": 60, "reasoning": 3})
    )
    out = stream(server, "openai")
    last = out.chunks[-1]
    assert last.choices == []
    usage = last.usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (100, 7, 107)
    assert usage.prompt_tokens_details.cached_tokens == 60
    assert usage.completion_tokens_details.reasoning_tokens == 3


def test_anthropic_usage_counts_cache_reads_and_writes_into_prompt_tokens(server, stream):
    server.add(
        Turn.text("Hi", usage={"prompt": 100, "completion": 7, "cache_read": 60, "cache_write": 10})
    )
    usage = stream(server, "anthropic").usage
    assert (usage.prompt_tokens, usage.completion_tokens) == (100, 7)
    assert usage.prompt_tokens_details.cached_tokens == 60
    assert usage.cache_creation_input_tokens == 10


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_usage_none_puts_no_usage_on_the_wire(server, protocol):
    server.add(Turn.text("Hi", usage=None))
    raw = post_raw(server, protocol, {"stream": True, "stream_options": {"include_usage": True}})
    assert b"usage" not in raw and b"Hi" in raw
    # (litellm still yields a usage chunk for such a stream: it estimates the counts locally.)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_429_retry_after_is_readable_from_the_litellm_exception(server, stream, litellm, protocol):
    """How to read Retry-After from a litellm exception (1.110): `exc.litellm_response_headers`
    (an httpx.Headers, case-insensitive) carries the provider's response headers on both routes.
    `exc.response.headers` has them only on the openai route (litellm rebuilds the response for
    anthropic), and `exc.headers` is None for provider errors."""
    server.add(Turn.error(429, "slow down", retry_after=7))
    err = stream(server, protocol).error
    assert isinstance(err, litellm.RateLimitError) and err.status_code == 429
    assert err.litellm_response_headers.get("retry-after") == "7"
    assert "slow down" in str(err)


def test_500_is_an_internal_server_error(server, stream, litellm):
    server.add(Turn.error(500, "boom"))
    err = stream(server, "openai").error
    assert isinstance(err, litellm.InternalServerError) and err.status_code == 500
    assert "boom" in str(err)


def test_anthropic_529_overloaded_surfaces_as_a_500_naming_overloaded_error(
    server, stream, litellm
):
    server.add(Turn([http_error(529, "Overloaded", retry_after=2)]))
    err = stream(server, "anthropic").error
    # litellm 1.110 maps Anthropic's 529 to InternalServerError with status_code 500; only the
    # message (the provider body) still says overloaded_error.
    assert isinstance(err, litellm.InternalServerError) and err.status_code == 500
    assert "overloaded_error" in str(err)
    assert err.litellm_response_headers.get("retry-after") == "2"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_dropped_connection_raises_after_the_first_chunks(server, stream, litellm, protocol):
    server.add(Turn([text("Hello world, this is", chunk=4), drop(), text("never sent")]))
    out = stream(server, protocol)
    assert "".join(contents(out)) == "Hello world, this is"
    # litellm 1.110: MidStreamFallbackError (a ServiceUnavailableError, status 500) wrapping an
    # APIConnectionError; never a clean end of stream.
    assert isinstance(out.error, litellm.exceptions.MidStreamFallbackError)
    assert server.requests[-1].outcome == "dropped"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_requests_are_recorded_with_messages_and_tool_names(server, stream, protocol):
    server.add(Turn.text("ok"))
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather?"}]
    stream(server, protocol, messages=messages, tools=[WEATHER, tool("python", code="string")])
    (req,) = server.requests
    assert req.protocol == protocol and req.stream and req.outcome == "complete"
    assert req.path == ("/v1/messages" if protocol == "anthropic" else "/v1/chat/completions")
    assert req.tools == ["get_weather", "python"]
    assert req.messages[-1]["content"] in ("Weather?", [{"type": "text", "text": "Weather?"}])
    assert req.received_at <= req.responded_at <= req.finished_at
    assert server.first_byte_times == [req.received_at]
    key = "x-api-key" if protocol == "anthropic" else "authorization"
    assert "fake" in req.headers[key]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_non_streaming_request_gets_one_json_response(server, litellm, run, protocol):
    server.add(Turn([text("Summary."), tool_call("get_weather", {"city": "Oslo"})], usage=(30, 5)))
    response = run(
        litellm.acompletion(
            **server.model_kwargs(protocol),
            messages=[{"role": "user", "content": "hi"}],
            max_retries=0,
        )
    )
    message = response.choices[0].message
    assert message.content == "Summary."
    assert json.loads(message.tool_calls[0].function.arguments) == {"city": "Oslo"}
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (30, 5)
    assert not server.requests[0].stream


def test_exhausted_script_answers_a_clear_500(server, stream, litellm):
    server.add("only turn")
    assert stream(server, "openai").text == "only turn"
    err = stream(server, "openai").error
    assert isinstance(err, litellm.InternalServerError)
    assert "script exhausted after 1 requests; add turns with server.add(...)" in str(err)


def test_turns_are_consumed_in_order_and_responders_see_the_request(server, stream):
    server.add(
        Turn.text("first"), lambda req: Turn.text(f"you sent {len(req.messages)} message(s)")
    )
    assert stream(server, "openai").text == "first"
    assert stream(server, "anthropic").text == "you sent 1 message(s)"
    assert server.remaining == 0


def test_delay_and_chunk_delay_slow_the_stream(server, stream):
    server.add(Turn([text("ab", chunk=1), delay(0.3), text("c")], chunk_delay=0.05))
    out = stream(server, "openai")
    req = server.requests[0]
    assert out.text == "abc"
    # six SSE events (a, b, c, finish, usage, [DONE]): five chunk delays plus the scripted pause
    assert 0.3 + 5 * 0.05 <= req.finished_at - req.responded_at < 2.0


def test_http_error_may_only_follow_delays():
    Turn([delay(0.1), http_error(500)])
    with pytest.raises(ValueError, match="only delay"):
        Turn([text("partial"), http_error(500)])


def test_a_long_stream_is_not_slowed_by_the_server(server):
    server.add(Turn([text("x" * 2000, chunk=1)]))
    start = time.perf_counter()
    raw = post_raw(server, "openai", {"stream": True})
    assert raw.count(b'"content":"x"') == 2000
    assert time.perf_counter() - start < 1.0  # ~0.1 s here; litellm itself needs ~1 ms a chunk


def test_stop_closes_the_server_and_its_keepalive_connections(stream):
    server = FakeModelServer(["one"]).start()
    assert stream(server, "openai").text == "one"
    url = server.url
    server.stop()
    with pytest.raises(RuntimeError, match="not running"):
        _ = server.url
    conn = http.client.HTTPConnection(url.removeprefix("http://"), timeout=2)
    with pytest.raises(OSError):
        conn.request("GET", "/v1/models")
        conn.getresponse()


def test_fixture_starts_an_empty_server(fake_model_server, stream):
    assert fake_model_server.remaining == 0
    fake_model_server.add(Turn.tool("get_weather", {"city": "Rome"}))
    out = stream(fake_model_server, "anthropic", tools=[WEATHER])
    assert out.tool_calls[0]["name"] == "get_weather"


# -- demo mode -------------------------------------------------------------------------------


@pytest.fixture
def demo():
    with FakeModelServer.demo() as s:
        yield s


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_demo_echoes_the_question_and_says_it_is_the_demo(demo, stream, protocol):
    out = stream(demo, protocol, messages=[{"role": "user", "content": "What is 2+2?"}])
    assert out.text.startswith(DEMO_ANNOUNCEMENT)
    assert "What is 2+2?" in out.text and out.finish_reason == "stop"
    assert len(contents(out)) > 10 and out.usage.completion_tokens > 0


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_demo_looks_at_variables_then_summarizes_the_result(demo, stream, protocol):
    tools = [tool("variables"), tool("python", code="string")]
    ask = [{"role": "user", "content": "What do I have?"}]
    first = stream(demo, protocol, messages=ask, tools=tools)
    assert first.text and DEMO_ANNOUNCEMENT not in first.text  # a step: the answer says it
    assert [(c["name"], c["arguments"]) for c in first.tool_calls.values()] == [("variables", "{}")]
    call = first.tool_calls[0]
    history = [
        *ask,
        {
            "role": "assistant",
            "content": first.text,
            "tool_calls": [
                {
                    "id": call["id"],
                    "type": "function",
                    "function": {"name": "variables", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": call["id"], "content": "df: DataFrame (3, 2)\nx: int = 3"},
    ]
    second = stream(demo, protocol, messages=history, tools=tools)
    assert second.text.startswith(DEMO_ANNOUNCEMENT)
    assert "The `variables` tool returned" in second.text
    # fenced, not quoted: a blockquote would join the lines when the answer is rendered
    assert "```text\ndf: DataFrame (3, 2)\nx: int = 3\n```" in second.text
    assert second.tool_calls == {} and second.finish_reason == "stop"


def test_demo_draws_a_chart_through_the_python_tools_own_parameter(demo, stream):
    seen = "weather: DataFrame 3 rows × 2 columns, 1 KB\n\ndtypes:\ncity       str\nvisits   int64\n"
    history = [
        {"role": "user", "content": "Plot visits by city for `weather`."},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function",
            "function": {"name": "variables", "arguments": '{"name": "weather"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": seen},
    ]
    out = stream(demo, "openai", messages=history,
                 tools=[tool("variables"), tool("python", source="string")])
    (call,) = out.tool_calls.values()
    source = json.loads(call["arguments"])["source"]
    assert call["name"] == "python" and source.startswith("# chart: weather: total visits by city")
    assert "weather.groupby('city')['visits']" in source


def test_module_entry_serves_the_demo_until_stopped():
    proc = subprocess.Popen(
        [sys.executable, "-m", "forge_jupyter.testing", "--demo", "--chunk-delay", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        url = proc.stdout.readline().split()[-1]
        assert url.startswith("http://127.0.0.1:")
        body = {"model": "m", "messages": [{"role": "user", "content": "ping"}]}
        conn = http.client.HTTPConnection(url.removeprefix("http://"), timeout=5)
        conn.request("POST", "/v1/chat/completions", json.dumps(body))
        reply = json.loads(conn.getresponse().read())
        assert reply["choices"][0]["message"]["content"].startswith(DEMO_ANNOUNCEMENT)
    finally:
        proc.terminate()
        proc.wait(timeout=5)


# -- helpers ---------------------------------------------------------------------------------


def post_raw(server: FakeModelServer, protocol: str, extra: dict) -> bytes:
    """POST straight to the server (no litellm) and return the de-chunked body."""
    path = "/v1/messages" if protocol == "anthropic" else "/v1/chat/completions"
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], **extra}
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    return conn.getresponse().read()


def test_a_failing_responder_is_reported_to_the_client(server, stream, litellm):
    server.add(lambda req: {}["missing"])
    err = stream(server, "openai").error
    assert isinstance(err, litellm.InternalServerError)
    assert "script entry raised KeyError" in str(err)
