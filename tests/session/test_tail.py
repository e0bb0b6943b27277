"""Tail retention: the last turns stay verbatim after the summary, tool calls with their results."""

from __future__ import annotations

from forge_jupyter.message import CompactionPart
from forge_jupyter.session.compaction import CONTINUE_TEXT
from forge_jupyter.testing import Turn, tool_call
from tests.session.support import assert_calls_answered, contents, say, shown, words

SMALL = "openai/gpt-4"  # usable window 3,276 tokens → a tail budget of 1,638


def lookup_forge(make_forge):
    forge = make_forge(model=SMALL)

    @forge.tool
    def lookup(key: str, size: int = 40) -> str:
        """Look a key up."""
        return " ".join(f"{key}-value-{i}" for i in range(size))

    return forge


def test_the_tail_keeps_tool_calls_with_their_results_after_the_summary(make_forge, server):
    server.add(
        say(words("a0"), usage=(500, 20)),
        Turn([tool_call("lookup", {"key": "alpha"})], usage=(600, 20)),
        say(words("a1"), usage=(700, 20)),
        Turn([tool_call("lookup", {"key": "beta"}), tool_call("lookup", {"key": "gamma"})],
             usage=(800, 20)),
        say(words("a2"), usage=(3_200, 20)),
        say("## Goal\n" + words("SUMMARY")),
        say(words("a3"), usage=(900, 20)),
    )
    forge = lookup_forge(make_forge)
    session = forge.session("s")
    for i in range(4):
        session.prompt(words(f"q{i}"))

    for request in server.requests:
        assert_calls_answered(request)
    after = server.requests[-1]
    roles = [m["role"] for m in after.messages]
    assert roles == ["system", "user", "assistant",  # the boundary
                     "user", "assistant", "tool", "tool", "assistant",  # q2's turn, whole
                     "user", "user"]  # q3, continue
    assert contents(after)[2] == ("user", words("q2"))
    assert "beta-value-0" in shown(after) and "gamma-value-39" in shown(after)
    assert "alpha-value-0" not in shown(after) and "q1-0" not in shown(after)
    assert contents(after)[-1] == ("user", CONTINUE_TEXT)
    # the summarizing call read q1's call and result together
    assert "alpha-value-0" in shown(server.requests[5])


def test_a_turn_too_big_for_the_tail_is_summarized_whole_call_and_result(make_forge, server):
    server.add(
        say(words("a0"), usage=(500, 20)),
        Turn([tool_call("lookup", {"key": "big", "size": 600})], usage=(600, 20)),  # ~1,900 tokens
        say(words("a1"), usage=(3_200, 20)),
        say("## Goal\n" + words("SUMMARY")),
        say(words("a2"), usage=(900, 20)),
    )
    forge = lookup_forge(make_forge)
    session = forge.session("s")
    for i in range(3):
        session.prompt(words(f"q{i}"))

    compaction = next(p for m in session.messages() for p in m.parts if isinstance(p, CompactionPart))
    q2 = next(m for m in session.messages() if m.text == words("q2"))
    assert compaction.tail_start == q2.id  # only the last turn fits the tail budget
    for request in server.requests:
        assert_calls_answered(request)
    summarize, after = server.requests[3], server.requests[4]
    assert "big-value-599" in shown(summarize)
    assert "big-value-0" not in shown(after)
    assert contents(after)[1:] == [("assistant", "## Goal\n" + words("SUMMARY")),
                                   ("user", words("q2")), ("user", CONTINUE_TEXT)]
