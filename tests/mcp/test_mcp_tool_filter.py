"""Which MCP tools the model gets: a server's tool list in the spellings people copy
(mcp/tool_filter.py), many tools offered lazily through tool_search (tools/tool_search.py),
and MCP tools shortened under the lean profile — against the real test server."""

from __future__ import annotations

import pytest

from forge_jupyter.mcp import McpWarning
from forge_jupyter.mcp.tool_filter import parse_filter
from forge_jupyter.testing import Turn, tool_call
from tests.mcp.mcp_helpers import stdio, tool_parts

TOOLS = ["lookup", "delete_row", "write_note", "touch"]


@pytest.mark.parametrize("entry,kept", [
    ({"includeTools": ["lookup", "t__touch"]}, ["lookup", "touch"]),
    ({"excludeTools": ["delete_*"]}, ["lookup", "write_note", "touch"]),
    ({"enabled_tools": ["lookup", "touch"], "disabled_tools": ["touch"]}, ["lookup"]),
    ({"allowedTools": ["write_note"]}, ["write_note"]),
    ({"disabledTools": ["lookup", "touch"]}, ["delete_row", "write_note"]),
    ({"tools": ["lookup"]}, ["lookup"]),
    ({"tools": {"*": False, "lookup": True}}, ["lookup"]),
    ({"tools": {"touch": False}}, ["lookup", "delete_row", "write_note"]),
    ({}, TOOLS),
])
def test_each_spelling_of_a_tool_list_keeps_what_it_says(entry, kept):
    offered = parse_filter(entry)
    assert [t for t in TOOLS if offered.keeps("t", t)] == kept
    assert offered.unmatched("t", TOOLS) == []


def test_a_tool_list_of_the_wrong_shape_is_refused_by_its_name():
    for entry, key in (({"includeTools": "lookup"}, "includeTools"),
                       ({"tools": {"lookup": "yes"}}, "tools")):
        with pytest.raises(ValueError, match=key):
            parse_filter(entry)


def test_a_server_offers_only_its_listed_tools_and_a_typo_is_said(mcp_forge, server):
    server.add(Turn.text("ok"))
    forge = mcp_forge(stdio("t", includeTools=["lookup", "whoami", "look_up"]))
    s = forge.session("s")
    with pytest.warns(McpWarning, match=r"includeTools names 'look_up'.*\(its tools: lookup, "):
        s.prompt("hi")  # a script hears of it (a notebook shows it as the turn's notice)
    assert sorted(server.requests[0].tools) == ["t__lookup", "t__whoami"]
    row = forge.mcp.status()[0]
    assert row["unmatched"] == ["includeTools names 'look_up', which the server does not offer"]
    assert row["filtered"] > 5


def test_many_tools_are_searched_and_loaded_and_stay_loaded(mcp_forge, server):
    server.add(Turn([tool_call("tool_search", {"query": "look a row up by key"})]),
               Turn([tool_call("tool_search", {"load": ["t__lookup", "t__nope"]})]),
               Turn([tool_call("t__lookup", {"key": "a"})]), Turn.text("alpha it is"),
               Turn.text("again"), Turn.text("lean"))
    forge = mcp_forge(stdio("t"), tool_search_tokens=100)
    s = forge.session("s")
    assert s.prompt("find a").text == "alpha it is"
    first, second, third = (server.requests[i].tools for i in range(3))
    assert "tool_search" in first and not [t for t in first if t.startswith("t__")]
    assert "t__lookup" not in second and "t__lookup" in third
    found, loaded, looked = tool_parts(forge, s)
    assert found.output.splitlines()[1].startswith("- t__lookup: [MCP server t] Look a row up")
    assert "Loaded t__lookup" in loaded.output and "No such tool: t__nope" in loaded.output
    assert looked.output == "alpha"
    # The session's next turn starts with what it loaded; nothing else came with it.
    s.prompt("more")
    again = server.requests[-1].tools
    assert "t__lookup" in again and "tool_search" in again and "t__chart" not in again
    # Lean: MCP tools keep their first sentence and no per-parameter prose.
    forge.tool_profile = "lean"
    s.prompt("short")
    lookup = next(t["function"] for t in server.requests[-1].body["tools"]
                  if t["function"]["name"] == "t__lookup")
    assert lookup["description"] == "[MCP server t] Look a row up by key (read-only)."
    assert "description" not in lookup["parameters"]["properties"]["key"]


def test_few_tools_are_offered_whole(mcp_forge, server):
    server.add(Turn.text("ok"))
    forge = mcp_forge(stdio("t"))  # the default tool_search_tokens: the test server is small
    forge.session("s").prompt("hi")
    assert "tool_search" not in server.requests[0].tools and "t__lookup" in server.requests[0].tools
