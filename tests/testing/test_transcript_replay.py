"""Every recorded transcript, replayed by the fake server through real litellm, against parse_wire."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from forge_jupyter.testing import FakeModelServer, Turn
from forge_jupyter.testing.sse import split_events
from forge_jupyter.testing.transcripts import (
    TRANSCRIPTS_DIR,
    find_transcripts_dir,
    list_transcripts,
    parse_wire,
)

TRANSCRIPTS = list_transcripts()
# litellm legitimately differs from the wire here:
# - openrouter-midstream-error: the chunk with `error: {code: 400}` makes litellm raise
#   MidStreamFallbackError (status 500) after yielding what came before; the wire usage is lost.
RAISES_MIDSTREAM = {"openrouter-midstream-error.sse"}
# - anthropic-docs-thinking has no usage on the wire; litellm estimates one locally.
NO_WIRE_USAGE = {"anthropic-docs-thinking.sse"}


def test_transcripts_are_found():
    assert TRANSCRIPTS, f"no .sse files under {TRANSCRIPTS_DIR}; they live in tests/data/transcripts"


def test_the_recorded_streams_are_the_repos_own_with_their_sources(monkeypatch):
    # A clone with nothing beside it passes: the data is in the repo, not in a folder next to it.
    monkeypatch.delenv("FORGE_TRANSCRIPTS_DIR", raising=False)
    here = Path(__file__).resolve().parents[1] / "data" / "transcripts"
    assert find_transcripts_dir() == here
    assert len(list_transcripts(here)) >= 16
    sources = (here / "SOURCES.md").read_text(encoding="utf-8")
    assert all(p.name in sources for p in list_transcripts(here))


@pytest.fixture(scope="module")
def server():
    with FakeModelServer() as s:
        yield s


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda p: p.stem)
def test_replay_through_litellm_matches_the_wire(server, stream, litellm, path):
    wire = parse_wire(path)
    server.add(Turn.replay(path))
    out = stream(server, wire.protocol)
    assert out.text == wire.text
    assert out.reasoning == wire.reasoning
    assert out.tool_calls == {
        c.index: {"id": c.id, "name": c.name, "arguments": c.arguments} for c in wire.tool_calls
    }
    assert out.finish_reason == wire.finish_reason
    if path.name in RAISES_MIDSTREAM:
        assert isinstance(out.error, litellm.exceptions.MidStreamFallbackError)
        assert wire.error == {"code": 400, "message": "Token limit reached"}
        return
    assert out.error is None
    if path.name in NO_WIRE_USAGE:
        assert wire.usage is None and out.usage is not None
    else:
        usage = (out.usage.prompt_tokens, out.usage.completion_tokens)
        assert usage == (wire.usage.prompt_tokens, wire.usage.completion_tokens)


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda p: p.stem)
def test_replay_is_byte_for_byte_one_event_per_chunk(server, path):
    raw = path.read_bytes()
    events = split_events(raw)
    assert b"".join(events) == raw
    server.add(Turn.replay(path))
    route = "/v1/messages" if parse_wire(path).protocol == "anthropic" else "/v1/chat/completions"
    head, framed = raw_exchange(server.port, route, {"model": "m", "stream": True, "messages": []})
    assert b"Transfer-Encoding: chunked" in head
    assert framed == b"".join(b"%X\r\n%s\r\n" % (len(e), e) for e in events) + b"0\r\n\r\n"


def test_replay_on_the_wrong_route_is_a_clear_400(server, stream, litellm):
    server.add(Turn.replay(TRANSCRIPTS_DIR / "anthropic-docs-thinking.sse"))
    err = stream(server, "openai").error
    assert isinstance(err, litellm.BadRequestError)
    assert "is an anthropic stream but the request came to the openai route" in str(err)


def test_parse_wire_keeps_the_traps_straight():
    by_name = {p.name: parse_wire(p) for p in TRANSCRIPTS}
    qwen = by_name["qwen-dashscope-tool-call-empty-id.sse"].tool_calls
    assert [(c.id, c.name) for c in qwen] == [("call_eee11723464a4b9eb8cee71d", "weather")]
    mistral = by_name["mistral-api-incremental-tool-call-empty-name.sse"].tool_calls
    assert [c.name for c in mistral] == ["webSearchTool"] and mistral[0].valid_json
    truncated = by_name["anthropic-sdk-tool-use-max-tokens-truncated.sse"]
    assert truncated.finish_reason == "length" and not truncated.tool_calls[0].valid_json
    assert by_name["groq-gpt-oss-reasoning-tool-call.sse"].reasoning.startswith("We need")
    assert by_name["anthropic-docs-thinking.sse"].usage is None
    xai = by_name["xai-grok-reasoning-tool-call.sse"].usage
    assert (xai.prompt_tokens, xai.completion_tokens, xai.total_tokens) == (307, 26, 560)
    azure = by_name["azure-openai-empty-choices-content-filter.sse"]
    assert azure.text == "Capital of Denmark." and azure.finish_reason == "stop"
    assert by_name["openrouter-midstream-error.sse"].error["code"] == 400
    assert by_name["anthropic-thinking-padded.sse"].usage.completion_tokens == 282


def raw_exchange(port: int, path: str, body: dict) -> tuple[bytes, bytes]:
    """POST over a bare socket; return the response head and the body with its chunk framing."""
    payload = json.dumps(body).encode()
    request = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(payload)}\r\n\r\n"
    ).encode() + payload
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(request)
        received = b""
        while not received.endswith(b"\r\n0\r\n\r\n"):
            data = sock.recv(65536)
            assert data, "connection closed before the terminating chunk"
            received += data
    head, _, framed = received.partition(b"\r\n\r\n")
    return head, framed


def test_transcripts_dir_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("FORGE_TRANSCRIPTS_DIR", str(tmp_path))
    assert find_transcripts_dir() == tmp_path
    (tmp_path / "b.sse").write_text("data: [DONE]\n\n")
    (tmp_path / "a.sse").write_text("data: [DONE]\n\n")
    assert [p.name for p in list_transcripts(tmp_path)] == ["a.sse", "b.sse"]
