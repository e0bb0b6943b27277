"""A model server that accepts a request and then says nothing never hangs the run:
``Forge.stream_timeout`` seconds without a byte end the attempt, which is retried like a
dropped connection (bounded by the RetryPolicy), then the message ends ``error`` with a
reason that says which setting to raise."""

from __future__ import annotations

import time

import pytest

from forge_jupyter import Forge
from forge_jupyter.config import Forge as ForgeConfig
from forge_jupyter.errors import InvalidOption
from forge_jupyter.session.retry import RetryPolicy
from forge_jupyter.testing import Turn, delay, text

THREE_TRIES = RetryPolicy(max_attempts=3, base_delay=0.01, max_delay=0.02)
PROTOCOLS = ["openai", "anthropic"]


def assert_nothing_open(forge, session_id):
    for m in forge.store.iter_timeline(session_id):
        assert m.is_terminal, m
        for p in m.parts:
            assert p.is_terminal, p


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_server_that_never_sends_a_byte_is_retried_then_ends_with_a_clear_error(
        make_forge, server, protocol):
    for _ in range(3):  # accepts the request, then no headers, no byte, for a minute
        server.add(Turn([delay(60), text("far too late")]))
    forge = make_forge(protocol=protocol, stream_timeout=0.5, retry=THREE_TRIES)
    answer = forge.session("s").prompt("q")
    # from the first request on (litellm's first import is slow on a busy machine): three
    # attempts of 0.5 s and two short waits, not minutes
    arrived = [r.received_at for r in server.requests]
    assert time.monotonic() - arrived[0] < 10
    assert all(0.45 < later - earlier < 5 for earlier, later in zip(arrived, arrived[1:], strict=False))
    assert answer.status == "error"
    reason = answer.error.message
    assert reason.startswith("gave up after 3 attempts")
    assert "accepted the request but sent nothing for 0.5 s" in reason
    assert "Forge.stream_timeout" in reason and "FORGE_STREAM_TIMEOUT" in reason
    assert [p.attempt for p in answer.parts if p.type == "retry"] == [1, 2]
    assert len(server.requests) == 3
    assert all(r.responded_at is None for r in server.requests)  # not a byte came back
    assert_nothing_open(forge, answer.session_id)


def test_one_hung_request_then_an_answer_is_a_retry_not_an_error(make_forge, server):
    server.add(Turn([delay(60), text("never")]), Turn.text("second try answered"))
    forge = make_forge(stream_timeout=0.5)
    answer = forge.session("s").prompt("q")
    assert answer.status == "completed" and answer.text == "second try answered"
    [retry] = [p for p in answer.parts if p.type == "retry"]
    assert "sent nothing for 0.5 s" in retry.error


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_stream_that_stalls_mid_answer_keeps_what_arrived_and_ends_with_a_clear_error(
        make_forge, server, protocol):
    server.add(Turn([text("The first half arrived."), delay(60), text(" Never sent.")]))
    forge = make_forge(protocol=protocol, stream_timeout=0.5)
    answer = forge.session("s").prompt("q")
    assert time.monotonic() - server.requests[0].received_at < 10
    assert answer.status == "error"
    assert answer.text == "The first half arrived."
    reason = answer.error.message
    assert "went silent for 0.5 s in the middle of its answer" in reason
    assert "FORGE_STREAM_TIMEOUT" in reason
    assert len(server.requests) == 1  # output had arrived: never retried (it would repeat)
    assert_nothing_open(forge, answer.session_id)


def test_a_slow_but_steady_stream_is_not_cut_off(make_forge, server):
    # 12 pieces 0.2 s apart: 2.4 s in all, never 0.5 s of silence
    server.add(Turn([delay(0.3), text("a slow steady answer", chunk=2)], chunk_delay=0.2))
    forge = make_forge(stream_timeout=0.5)
    answer = forge.session("s").prompt("q")
    assert answer.status == "completed" and answer.text == "a slow steady answer"
    assert [p for p in answer.parts if p.type == "retry"] == []


def test_the_default_is_120_seconds_from_config_and_environment(monkeypatch, tmp_path):
    assert Forge(db=":memory:", builtin_tools=False).stream_timeout == 120.0
    monkeypatch.delenv("FORGE_STREAM_TIMEOUT", raising=False)
    config = ForgeConfig()
    assert config.stream_timeout == 120.0
    monkeypatch.setenv("FORGE_STREAM_TIMEOUT", "7.5")
    config = ForgeConfig()
    assert ("stream_timeout", 7.5, "env FORGE_STREAM_TIMEOUT") in config.effective()
    kwargs = config.forge_kwargs()
    kwargs.update(db=str(tmp_path / "f.duckdb"), builtin_tools=False)
    forge = Forge(**kwargs)
    assert forge.stream_timeout == 7.5
    forge.close()


@pytest.mark.parametrize("value", [0, -1, float("nan"), float("inf"), "30", True])
def test_a_stream_timeout_that_cannot_work_is_refused_naming_it(value):
    with pytest.raises(InvalidOption) as caught:
        Forge(db=":memory:", builtin_tools=False, stream_timeout=value)
    message = str(caught.value)
    assert "stream_timeout" in message and repr(value) in message
    assert isinstance(caught.value, ValueError)
    forge = Forge(db=":memory:", builtin_tools=False, stream_timeout=None)  # litellm's own
    with pytest.raises(InvalidOption):
        forge.stream_timeout = value
