"""render.py: the Markdown a notebook keeps. Model text stays Markdown but cannot carry HTML
or script into a trusted output; everything built around it is escaped."""

from __future__ import annotations

import re

import pytest

from forge_jupyter import render
from forge_jupyter.model import (
    CompactionPart,
    ErrorInfo,
    Message,
    PatchFile,
    PatchPart,
    ReasoningPart,
    RetryPart,
    StepFinishPart,
    TextPart,
    Tokens,
    ToolPart,
)

SID = "ses_test"


def assistant(*parts, **fields) -> Message:
    m = Message(session_id=SID, role="assistant", model="openai/fake-model", **fields)
    m.parts = [p.model_copy(update={"message_id": m.id}) for p in parts]
    return m


def part(cls, **fields):
    return cls(session_id=SID, message_id="msg_x", **fields)


# Raw HTML that would run if it reached a trusted Markdown output as HTML.
@pytest.mark.parametrize("hostile", [
    '<img src=x onerror="alert(1)">',
    "<script>alert(1)</script>",
    '<svg onload="alert(1)"></svg>',
    "<iframe src=\"javascript:alert(1)\"></iframe>",
    "<b>\n```\n<img src=x onerror=alert(1)>\n```",  # an HTML block would swallow the fence
    "| `x | <img src=x onerror=alert(1)> ` |",  # a table cell splits the code span
    "`code\n# <img src=x onerror=alert(1)> `",  # a heading ends the paragraph mid-span
    "\\<img src=x onerror=alert(1)>",
])
def test_safe_markdown_leaves_no_raw_tag_outside_code(hostile):
    out = render.safe_markdown(hostile)
    outside_code = re.sub(r"```.*?```", "", out, flags=re.S)
    assert not re.search(r"<(img|script|svg|iframe)", outside_code, re.I), out


@pytest.mark.parametrize("link", [
    "[x](javascript:alert(1))", "[x](JavaScript:alert(1))", "[x](java&#9;script:alert(1))",
    "[x](javascript&colon;alert(1))", "[x](\njavascript:alert(1))", "[x]: vbscript:msgbox",
    "[x](data:text/html,hi)", "![x](javascript:alert(1))",
])
def test_safe_markdown_disarms_script_links(link):
    assert "#unsafe-link-removed" in render.safe_markdown(link)


def test_safe_markdown_keeps_ordinary_markdown_and_code_as_written():
    text = ("# Title\n\nSome **bold**, a [link](https://example.com), `a < b`, a<br>b and "
            "<kbd>Ctrl</kbd>.\n\n```python\nif a < b:\n    print('<ok>')\n```\n\n"
            "![plot](data:image/png;base64,iVBORw0KGgo=)")
    assert render.safe_markdown(text) == text


def test_code_span_and_block_hold_any_backticks():
    assert render.code_span("a`b") == "``a`b``"
    assert render.code_span("`x`") == "`` `x` ``"
    block = render.code_block("```\ninside\n```")
    assert block.startswith("````\n") and block.endswith("\n````")


def test_message_markdown_is_the_answer_and_a_footer():
    m = assistant(part(TextPart, text="The answer is **42** <img src=x onerror=alert(1)>."),
                  tokens=Tokens(input=1234, output=56), cost=0.0012, status="completed")
    md = render.message_markdown(m)
    assert md.startswith("The answer is **42** &lt;img")
    assert "<sub>1,234 in · 56 out · $0.0012 · openai/fake-model</sub>" in md


def test_message_markdown_says_cost_unknown_estimates_and_errors():
    m = assistant(part(TextPart, text="partial"), tokens=Tokens(input=10, output=2, estimated=True),
                  cost=None, status="aborted",
                  error=ErrorInfo(type="aborted", message="stopped by the <user>"))
    md = render.message_markdown(m)
    assert "≈10 in · ≈2 out · cost unknown" in md
    assert "**Stopped:** stopped by the \\<user\\>" in md
    assert "Stopped: stopped by the <user>" in render.message_text(m)


def test_turn_work_is_everything_but_the_final_answer():
    user = Message(session_id=SID, role="user", status="completed")
    user.parts = [TextPart(session_id=SID, message_id=user.id, text="the prompt")]
    tool = part(ToolPart, call_id="c1", tool="python", state="completed",
                input={"code": "print('hi')\nprint('there')"}, output="hi\nthere",
                time_start=1.0, time_end=1.25, title="print('hi')")
    step1 = assistant(part(ReasoningPart, text="think <script>", time_start=0.0, time_end=1.5),
                      part(TextPart, text="Let me run it."), tool,
                      part(StepFinishPart, tokens=Tokens(input=100, output=10), cost=None,
                           model="openai/fake-model"),
                      status="completed")
    step2 = assistant(part(TextPart, text="FINAL ANSWER"),
                      part(StepFinishPart, tokens=Tokens(input=200, output=20), cost=None),
                      status="completed")
    md = render.turn_work_markdown([user, step1, step2])
    assert "the prompt" not in md and "FINAL ANSWER" not in md
    assert "<details><summary>Reasoning · 1.50 s</summary>" in md and "think &lt;script>" in md
    assert "Let me run it." in md
    assert "**`python`** · completed · 250 ms — print('hi')" in md
    assert "```python\nprint('hi')\nprint('there')\n```" in md  # the code argument, readable
    assert "```\nhi\nthere\n```" in md
    assert "100 in · 10 out · cost unknown · openai/fake-model" in md
    assert "200 in" not in md.split("\n", 1)[1]  # the final step's footer is the value's
    assert md.startswith("<sub>forge · 2 steps · 1 tool call")
    text = render.turn_work_text([user, step1, step2])
    assert "[python] completed in 250 ms" in text and "FINAL ANSWER" not in text


def test_turn_work_shows_retries_compactions_patches_errors_and_images():
    diff = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-old\n+new\n"
    compact = Message(session_id=SID, role="user", status="completed")
    compact.parts = [CompactionPart(session_id=SID, message_id=compact.id, auto=True,
                                    reason="context overflow")]
    failing = part(ToolPart, call_id="c2", tool="write", state="error", error="denied: `no`",
                   input={"path": "x.py"}, time_start=1.0, time_end=1.0)
    step = assistant(part(RetryPart, attempt=1, error="RateLimitError: slow down", wait=0.5),
                     failing, part(PatchPart, files=[PatchFile(path="x.py", diff=diff,
                                                              additions=1, deletions=1)]),
                     status="completed")
    last = assistant(part(TextPart, text="done"), status="completed")
    png = {"image/png": "iVBORw0KGgo=", "text/plain": "image/png 10×10"}
    md = render.turn_work_markdown([compact, step, last], displays={failing.id: [png]})
    assert "↻ **Retry 1** · waited 500 ms · RateLimitError: slow down" in md
    assert "**Context compacted** automatically — context overflow" in md
    assert "**`write`** · error · 0 ms" in md and "```\ndenied: `no`\n```" in md
    assert "<summary>Patch x.py +1 −1</summary>" in md and f"```diff\n{diff.rstrip()}\n```" in md
    assert "![image/png 10×10](data:image/png;base64,iVBORw0KGgo=)" in md


def test_empty_turn_renders_nothing():
    assert render.turn_work_markdown([]) == "" and render.turn_work_text([]) == ""


def test_a_background_turn_record_can_end_with_its_answer():
    last = assistant(part(TextPart, text="the answer"), tokens=Tokens(input=3, output=1),
                     cost=None, status="completed")
    md = render.turn_work_markdown([last], with_answer=True)
    assert md.endswith(render.message_markdown(last))
    assert "the answer" not in render.turn_work_markdown([last])
    assert render.turn_work_text([last], with_answer=True).endswith(render.message_text(last))
