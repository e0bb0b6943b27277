"""The `search` flag (issue 18, item 3): which web tools a model is offered, asserted on what the
fake model server received, and the provider's own web search stored as the wire carried it
(Anthropic's server tool blocks and citations, OpenAI's url_citation annotations)."""

from __future__ import annotations

import pytest

from forge_jupyter import Forge
from forge_jupyter.config import Forge as ForgeConfig
from forge_jupyter.message import TextPart
from forge_jupyter.testing import Turn
from tests.tools.search_wire import (
    ANSWER_1,
    ANSWER_2,
    CITED,
    QUERY,
    RESULT_URL,
    anthropic_search,
    openai_search,
    write,
)


def first_request(make_forge, server, protocol, model, flags):
    server.add(Turn.text("ok"))
    forge = make_forge(builtin_tools=True, protocol=protocol, model=model, flags=flags)
    forge.session("s").prompt("hi")
    return server.requests[-1]


def search_tools(request) -> list[dict]:
    return [t for t in request.body.get("tools") or [] if str(t.get("type", "")).startswith("web_search")]


@pytest.mark.parametrize(("protocol", "model"), [("openai", "openai/gpt-4o"),
                                                 ("anthropic", None)])  # anthropic/claude-sonnet-4-5
def test_web_tools_are_offered_only_under_the_search_flag(make_forge, server, protocol, model):
    off = first_request(make_forge, server, protocol, model, [])
    on = first_request(make_forge, server, protocol, model, ["search"])
    assert "webfetch" not in off.tools and "webfetch" in on.tools
    assert set(on.tools) - set(off.tools) == {"webfetch"}
    # litellm's table says neither model string searches by itself: no native search either way
    for request in (off, on):
        assert "web_search_options" not in request.body and search_tools(request) == []


@pytest.mark.parametrize(("protocol", "model"), [
    ("openai", "openai/gpt-4o-search-preview"),
    ("anthropic", "anthropic/claude-sonnet-4-5-20250929")])
def test_native_search_is_asked_for_where_litellm_says_the_model_has_it(
        make_forge, server, protocol, model):
    off = first_request(make_forge, server, protocol, model, [])
    on = first_request(make_forge, server, protocol, model, ["search"])
    assert "web_search_options" not in off.body and search_tools(off) == []
    if protocol == "openai":
        assert on.body["web_search_options"] == {"search_context_size": "medium"}
    else:  # litellm turns the option into Anthropic's server tool
        assert [t["type"] for t in search_tools(on)] == ["web_search_20250305"]
        assert "web_search_options" not in on.body
    assert "webfetch" in on.tools


def test_anthropic_web_search_is_stored_as_the_wire_carried_it(make_forge, server, tmp_path):
    server.add(Turn.replay(write(tmp_path / "search.sse", anthropic_search())), Turn.text("ok"))
    forge = make_forge(builtin_tools=True, protocol="anthropic", db="duckdb",
                       model="anthropic/claude-sonnet-4-5-20250929", flags=["search"])
    session = forge.session("s")
    reply = session.prompt("when was python 3.13 released?")
    assert reply.status == "completed", reply.error
    parts = [p for p in forge.session("s").messages()[1].parts if p.type in ("text", "tool")]
    assert [p.type for p in parts] == ["text", "tool", "text"]
    before, search, answer = parts
    assert before.text == "Let me search."
    assert search.tool == "web_search" and search.metadata["server"] is True
    assert search.state == "completed" and search.input == {"query": QUERY}
    assert f"1. Python Release Python 3.13.0 — {RESULT_URL} (October 7, 2024)" in search.output
    block = search.metadata["result"]
    assert block["type"] == "web_search_tool_result" and block["tool_use_id"] == search.call_id
    assert block["content"][0]["encrypted_content"] == "EqgfCioIARgBIiQ3YTAw"
    assert isinstance(answer, TextPart) and answer.text == ANSWER_1 + ANSWER_2
    (citation,) = answer.metadata["citations"]
    assert citation["cited_text"] == CITED and citation["url"] == RESULT_URL
    # the next request: the provider's search is not sent back as a call of ours
    session.prompt("thanks")
    sent = server.requests[-1].messages
    assert "srvtoolu_" not in str(sent) and ANSWER_2 in str(sent)


def test_openai_url_citations_are_kept_on_their_text(make_forge, server, tmp_path):
    server.add(Turn.replay(write(tmp_path / "search.sse", openai_search())))
    forge = make_forge(builtin_tools=True, db="duckdb", model="openai/gpt-4o-search-preview",
                       flags=["search"])
    reply = forge.session("s").prompt("when was python 3.13 released?")
    assert reply.status == "completed", reply.error
    (text,) = [p for p in forge.session("s").messages()[1].parts if p.type == "text"]
    assert text.text == ANSWER_1 + ANSWER_2
    (annotation,) = text.metadata["citations"]
    assert annotation["type"] == "url_citation"
    assert annotation["url_citation"]["url"] == RESULT_URL
    assert server.requests[0].body["web_search_options"] == {"search_context_size": "medium"}


def test_flags_come_from_config_and_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("FORGE_FLAGS", "search, Other")
    assert ForgeConfig().forge_kwargs()["flags"] == ["search", "Other"]
    memory = {"long_term_memory"}
    assert Forge(db=str(tmp_path / "a.duckdb")).flags - memory == {"search", "other"}  # a script
    monkeypatch.delenv("FORGE_FLAGS")
    assert ForgeConfig().forge_kwargs()["flags"] == []
    assert Forge(db=str(tmp_path / "b.duckdb")).flags - memory == set()


def test_a_failed_provider_search_is_a_failed_server_tool_part(make_forge, server, tmp_path):
    wire = anthropic_search(error="max_uses_exceeded")
    server.add(Turn.replay(write(tmp_path / "search.sse", wire)))
    forge = make_forge(builtin_tools=True, protocol="anthropic", db="duckdb",
                       model="anthropic/claude-sonnet-4-5-20250929", flags=["search"])
    assert forge.session("s").prompt("search").status == "completed"
    (search,) = forge.session("s").messages()[1].tool_parts
    assert search.state == "error" and "max_uses_exceeded" in search.error
    assert search.metadata["server"] is True
    assert search.metadata["result"]["content"]["error_code"] == "max_uses_exceeded"
