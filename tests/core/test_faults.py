"""Provider errors, broken streams and aborts: a clear error, nothing lost, nothing left open."""

from __future__ import annotations

import asyncio
import threading
import time

from forge_jupyter.bus import PartDelta, SessionStatus
from forge_jupyter.session.retry import RetryPolicy
from forge_jupyter.testing import Turn, delay, drop, text, tool_call


def assert_nothing_open(forge, session_id):
    for m in forge.store.iter_timeline(session_id):
        assert m.is_terminal, m
        for p in m.parts:
            assert p.is_terminal, p


def test_rate_limited_twice_then_success_leaves_two_retry_parts(make_forge, server):
    server.add(Turn.error(429, retry_after=0.05), Turn.error(429, retry_after=0.05), Turn.text("finally"))
    forge = make_forge()
    statuses = []
    forge.bus.subscribe(lambda e: statuses.append(e.status), types=SessionStatus)
    answer = forge.session("s").prompt("q")
    assert answer.status == "completed" and answer.text == "finally"
    retries = [p for p in answer.parts if p.type == "retry"]
    assert [r.attempt for r in retries] == [1, 2]
    assert all(r.wait == 0.05 for r in retries)  # Retry-After honoured
    assert "429" in retries[0].error
    assert statuses.count("retry") == 2
    assert len(server.requests) == 3


def test_server_error_forever_ends_after_bounded_attempts_with_a_readable_reason(make_forge, server):
    for _ in range(10):
        server.add(Turn.error(500, "upstream exploded"))
    forge = make_forge(retry=RetryPolicy(max_attempts=3, base_delay=0.01, max_delay=0.02))
    answer = forge.session("s").prompt("q")
    assert answer.status == "error"
    assert "gave up after 3 attempts" in answer.error.message
    assert "upstream exploded" in answer.error.message
    assert len(server.requests) == 3
    assert_nothing_open(forge, answer.session_id)


def test_overloaded_529_on_the_anthropic_route_is_retried(make_forge, server):
    server.add(Turn.error(529), Turn.text("recovered"))
    forge = make_forge(protocol="anthropic")
    answer = forge.session("s").prompt("q")
    assert answer.text == "recovered"
    assert [p.type for p in answer.parts].count("retry") == 1


def test_connection_dropped_mid_stream_keeps_the_text_received(make_forge, server):
    server.add(Turn([text("The first half arrived"), drop()]))
    forge = make_forge()
    answer = forge.session("s").prompt("q")
    assert answer.status == "error"
    assert "The first half arrived" in answer.text
    assert "stream broke" in answer.error.message
    assert_nothing_open(forge, answer.session_id)


def _abort_when(forge, session, predicate):
    def watch(event):
        if predicate(event):
            threading.Thread(target=session.abort).start()
    return forge.bus.subscribe(watch)


def test_abort_in_the_middle_of_text_closes_everything_as_aborted(make_forge, server):
    server.add(Turn([text("word " * 200, chunk=5)], chunk_delay=0.01))
    forge = make_forge()
    session = forge.session("s")
    seen = []
    _abort_when(forge, session, lambda e: isinstance(e, PartDelta) and len(seen.append(e) or seen) == 5)
    answer = session.prompt("talk")
    assert answer.status == "aborted" and answer.finish == "aborted"
    assert answer.text.startswith("word word")
    assert len(answer.text) < len("word " * 200)
    assert_nothing_open(forge, session.id)
    assert [e.type for e in forge.store.events(session.id).items].count("abort") == 1


def test_abort_in_the_middle_of_a_tool_closes_the_call_as_aborted(make_forge, server):
    server.add(Turn([tool_call("hang", {})]), Turn.text("never asked"))
    forge = make_forge()
    session = forge.session("s")
    running = threading.Event()

    @forge.tool
    async def hang() -> str:
        """Hangs until cancelled."""
        running.set()
        await asyncio.sleep(60)
        return "never"

    threading.Thread(target=lambda: (running.wait(10), session.abort())).start()
    started = time.monotonic()
    answer = session.prompt("go")
    assert time.monotonic() - started < 10
    assert answer.status == "aborted"
    [call] = answer.tool_parts
    assert call.state == "error" and call.error.startswith("aborted")
    assert len(server.requests) == 1
    assert_nothing_open(forge, session.id)


def test_a_slow_first_byte_is_not_an_error(make_forge, server):
    server.add(Turn([delay(0.3), text("late but fine")]))
    forge = make_forge()
    assert forge.session("s").prompt("q").text == "late but fine"
