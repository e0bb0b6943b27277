"""Prune: old big tool outputs become placeholders in the request; the store keeps them."""

from __future__ import annotations

import json

from forge_jupyter.message import ToolPart
from forge_jupyter.session.prune import PRUNE_MINIMUM, PRUNE_PROTECT
from forge_jupyter.testing import Turn, tool_call
from forge_jupyter.tools.history import history_tool
from tests.session.support import assert_calls_answered, say

OUTPUT_CHARS = 48_000  # 12,000 tokens each, under the 50 KB truncation limit


def tool_results(request) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in request.messages if m["role"] == "tool"}


def test_old_big_tool_outputs_become_placeholders_and_the_store_keeps_them(make_forge, server):
    assert (PRUNE_PROTECT, PRUNE_MINIMUM) == (40_000, 20_000)
    for i in range(6):
        server.add(Turn([tool_call("dump", {"n": i})]), say(f"dumped {i}"))
    forge = make_forge(char_budget=10**8, tools=[history_tool()])

    @forge.tool
    def dump(n: int) -> str:
        """Print table n."""
        return (f"table {n}: " + "lorem ipsum dolor sit amet " * 2_000)[:OUTPUT_CHARS]

    session = forge.session("s")
    for i in range(6):
        session.prompt(f"dump table {i}")
    calls = [p for m in session.messages() for p in m.parts if isinstance(p, ToolPart)]
    by_call = {c.call_id: c for c in calls}

    # At the sixth prompt only table 0 lies beyond the 40,000-token budget: 12,000 tokens
    # would be freed, under the 20,000 minimum, so nothing is pruned yet.
    assert all(len(out) == OUTPUT_CHARS for out in tool_results(server.requests[11]).values())

    # The seventh prompt: tables 0 and 1 (24,000 tokens) go; 2–4 (36,000) and 5 (the last
    # two turns) stay whole.
    server.add(Turn([tool_call("history", {"part_id": calls[0].id})]), say("read it back"))
    session.prompt("what was in table 0?")
    request = server.requests[12]
    assert_calls_answered(request)
    results = tool_results(request)
    for call_id, content in results.items():
        n = by_call[call_id].input["n"]
        if n < 2:
            part_id = by_call[call_id].id
            assert content.startswith("[Old output of dump pruned from context (12,000 tokens)")
            assert part_id in content and "history(part_id=" in content
        else:
            assert len(content) == OUTPUT_CHARS
    assert len(json.dumps(request.messages)) < 4 * OUTPUT_CHARS + 10_000

    # The store keeps every output whole, and the history tool reads a pruned one back.
    for c in calls:
        assert len(forge.store.get_part(c.id).output) == OUTPUT_CHARS
    read_back = tool_results(server.requests[13])
    [(call_id, content)] = [(k, v) for k, v in read_back.items() if k not in by_call]
    assert content.startswith("[tool dump completed]") and "table 0: lorem" in content
    assert len(content) > OUTPUT_CHARS
