"""Every recorded provider stream, through the whole prompt path: stored parts match the wire.

DESIGN §9. The fake server replays each ``tests/data/transcripts/*.sse`` byte for byte; real litellm
parses it; the Processor writes Parts; ``parse_wire`` (which never touches litellm) says what the
wire carried.
"""

from __future__ import annotations

import json
import re

import pytest

from forge_jupyter.testing import Turn
from forge_jupyter.testing.transcripts import TRANSCRIPTS_DIR, list_transcripts, parse_wire
from forge_jupyter.tools.base import Tool, ToolResult

TRANSCRIPTS = list_transcripts()
MID_STREAM_ERROR = {"openrouter-midstream-error.sse"}


def test_the_recorded_transcripts_are_there():
    # An empty parametrize would skip every test below silently: a missing folder must fail.
    assert len(TRANSCRIPTS) >= 16, (f"expected the recorded streams under {TRANSCRIPTS_DIR}; "
                                    "they live in the repo's tests/data/transcripts")


def _squash(s: str) -> str:
    return re.sub(r"\s+", " ", s).strip()


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=[p.name for p in TRANSCRIPTS])
def test_transcript_lands_in_the_store_as_the_wire_carried_it(path, make_forge, server):
    wire = parse_wire(path)
    server.add(Turn.replay(path), Turn.text("Thanks, done."))
    protocol = "anthropic" if wire.protocol == "anthropic" else "openai"
    model = "anthropic/claude-sonnet-4-5" if protocol == "anthropic" else "openai/gpt-4o"
    forge = make_forge(protocol=protocol, model=model)
    for name in {c.name for c in wire.tool_calls if c.name}:  # the tools the recording called
        forge.add_tool(Tool(name=name, description="recorded tool", parameters={"type": "object"},
                            execute=lambda args, ctx: ToolResult(output=json.dumps(args))))
    session = forge.session("replay")

    final = session.prompt("replay this")  # never raises, whatever the stream did

    first = session.messages()[1]
    texts = "".join(p.text for p in first.parts if p.type == "text" and not p.synthetic)
    assert _squash(texts) == _squash(wire.text)
    reasoning = "".join(p.text for p in first.parts if p.type == "reasoning")
    assert _squash(reasoning) == _squash(wire.reasoning)
    stored_calls = [(p.tool, p.input if p.raw_input is None else p.raw_input) for p in first.tool_parts]
    wire_calls = [(c.name, json.loads(c.arguments or "{}") if c.valid_json else c.arguments)
                  for c in wire.tool_calls]
    assert stored_calls == wire_calls
    for part, call in zip(first.tool_parts, wire.tool_calls, strict=True):
        if call.id:
            assert part.call_id == call.id
        assert part.is_terminal
    for m in session.messages():  # nothing is ever left open
        assert m.is_terminal and all(p.is_terminal for p in m.parts)

    if path.name in MID_STREAM_ERROR:
        assert first.status == "error" and "mid-stream" in first.error.message
        return
    if wire.finish_reason == "length":  # cut off at the output limit: marked, nothing runs
        assert first.finish == "length" and final.id == first.id
        assert "Cut off at the output limit" in first.text
        assert all(p.state == "error" and "cut off at the output limit" in p.error
                   for p in first.tool_parts)
    elif wire.tool_calls:
        assert first.finish == "tool-calls" and final.text == "Thanks, done."
        bad = [c for c in wire.tool_calls if not c.valid_json]
        for part in first.tool_parts:
            if part.raw_input is not None:
                assert part.state == "error" and "not valid JSON" in part.error
        assert len(bad) == sum(p.raw_input is not None for p in first.tool_parts)
    else:
        assert first.status == "completed"
        expected = {"tool_calls": "tool-calls", "content_filter": "content-filter"}.get(
            wire.finish_reason, wire.finish_reason)
        assert first.finish == expected
    step = [p for p in first.parts if p.type == "step-finish"][0]
    if wire.usage is not None:
        assert step.tokens.input == wire.usage.prompt_tokens
        assert step.tokens.estimated is False
    else:
        assert step.tokens.estimated is True  # litellm filled usage in; we say so
