"""The lean stream reader (``Forge.lean_stream``, llm/lean.py) against litellm's own: the same
scripted answer, recorded stream or fault, once each way — what the store holds and what the
person reads (parts, text, tool calls, usage, cost, retries, errors) must be the same."""

from __future__ import annotations

import json
import re

import pytest

from forge_jupyter.llm import lean
from forge_jupyter.session.retry import RetryPolicy
from forge_jupyter.testing import Turn, delay, drop, reasoning, text, tool_call
from forge_jupyter.testing.transcripts import list_transcripts, parse_wire
from forge_jupyter.tools.base import Tool, ToolResult
from tests.tools.search_wire import openai_search, write

OPENAI_TRANSCRIPTS = [p for p in list_transcripts() if parse_wire(p).protocol != "anthropic"]
_IDS = re.compile(r"\b(call|prt|msg|ses)_[0-9A-Za-z]+")

SHAPES = {
    "text, reasoning and two tool calls": lambda: [
        Turn([reasoning("Think first. "), text("Two calls: "), tool_call("echo", {"a": 1}),
              tool_call("echo", {"b": [1, 2]})], usage={"prompt": 120, "completion": 40,
                                                        "cached_tokens": 100}),
        Turn.text("done.")],
    "no usage on the wire": lambda: [Turn([text("counted here")], usage=None)],
    "rate limited, then an answer": lambda: [Turn.error(429, retry_after=0.01), Turn.text("ok")],
    "a refused request": lambda: [Turn.error(400, "fake: this request is malformed")],
    "dropped mid-answer": lambda: [Turn([text("The first half arrived"), drop()])],
    # litellm's guard: the same chunk 100 times in a row is a model stuck in a loop
    "a model repeating one chunk": lambda: [Turn([text("Hi. " + "abc" * 120, chunk=3)])],
    "silent mid-answer past stream_timeout": lambda: [Turn([text("begun "), delay(2.0),
                                                            text("late")])],
}


def _seen(message) -> dict:
    """What the person sees and the store holds of one assistant message, ids left out."""
    def clean(s):
        return _IDS.sub("<id>", s) if isinstance(s, str) else s

    parts = [(p.type, clean(getattr(p, "text", None)), getattr(p, "metadata", None), getattr(p, "tool", None),
              getattr(p, "input", None), getattr(p, "raw_input", None), getattr(p, "state", None),
              clean(getattr(p, "error", None)), getattr(p, "attempt", None))
             for p in message.parts if p.type not in ("step-start",)]
    error = (message.error.type, clean(message.error.message)) if message.error else None
    return {"status": message.status, "finish": message.finish, "error": error,
            "tokens": message.tokens, "cost": message.cost, "parts": parts}


def _run(make_forge, server, turns, lean_stream: bool, **kw):
    server.clear()  # what a failed run left unasked is not the next run's
    server.add(*turns)
    forge = make_forge(lean_stream=lean_stream, **kw)
    forge.add_tool(Tool(name="echo", description="echo", parameters={"type": "object"},
                        execute=lambda args, ctx: ToolResult(output=json.dumps(args))))
    session = forge.session(new=True)
    session.prompt("go")
    return [_seen(m) for m in session.messages() if m.role == "assistant"]


@pytest.fixture
def lean_reads(monkeypatch):
    """How many streams the lean reader read (it must have read them, or nothing is compared)."""
    count = []
    init = lean.LeanChunks.__init__

    def counted(self, response):
        count.append(1)
        init(self, response)

    monkeypatch.setattr(lean.LeanChunks, "__init__", counted)
    return count


@pytest.mark.parametrize("shape", SHAPES, ids=list(SHAPES))
def test_a_scripted_answer_or_fault_lands_the_same_read_lean(shape, make_forge, server, lean_reads):
    kw = {"retry": RetryPolicy(max_attempts=2, base_delay=0.01, max_delay=0.02)}
    if "stream_timeout" in shape:
        kw["stream_timeout"] = 0.5
    classic = _run(make_forge, server, SHAPES[shape](), False, **kw)
    assert not lean_reads
    assert _run(make_forge, server, SHAPES[shape](), True, **kw) == classic
    if "refused" not in shape:
        assert lean_reads


def test_the_providers_own_search_and_its_citations_land_the_same_read_lean(
        make_forge, server, lean_reads, tmp_path):
    turns = lambda: [Turn.replay(write(tmp_path / "search.sse", openai_search()))]  # noqa: E731
    kw = {"db": "duckdb", "model": "openai/gpt-4o-search-preview", "flags": ["search"]}
    classic = _run(make_forge, server, turns(), False, **kw)
    assert _run(make_forge, server, turns(), True, **kw) == classic
    assert lean_reads and "citations" in str(classic)


@pytest.mark.parametrize("path", OPENAI_TRANSCRIPTS, ids=[p.name for p in OPENAI_TRANSCRIPTS])
def test_a_recorded_stream_lands_the_same_read_lean(path, make_forge, server, lean_reads):
    turns = lambda: [Turn.replay(path), Turn.text("Thanks, done.")]  # noqa: E731
    classic = _run(make_forge, server, turns(), False, model="openai/gpt-4o")
    assert _run(make_forge, server, turns(), True, model="openai/gpt-4o") == classic
    assert lean_reads
