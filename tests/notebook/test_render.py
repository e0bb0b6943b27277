"""forge_jupyter.render: the HTML a notebook keeps. Model Markdown keeps its meaning (headings,
lists, tables, code, links, math) and loses anything that could run; everything built around it
is escaped, and the whole document is sanitized once more. Hostile input: test_markdown_xss.py.
"""

from __future__ import annotations

import re
import subprocess
import sys

from forge_jupyter import render
from forge_jupyter.message import (
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
from tests.xss_corpus import Tree, check_html

SID = "ses_test"


def assistant(*parts, **fields) -> Message:
    m = Message(session_id=SID, role="assistant", model="openai/fake-model", **fields)
    m.parts = [p.model_copy(update={"message_id": m.id}) for p in parts]
    return m


def part(cls, **fields):
    return cls(session_id=SID, message_id="msg_x", **fields)


def tags(html: str) -> list[str]:
    return [t for t, _ in Tree(html).elements]


def plain(html: str) -> str:
    """``html`` without its inline styles (the record's fallback looks, render/look.py)."""
    return re.sub(r' style="[^"]*"', "", html)


def heads(html: str) -> list[str]:
    """Each tool card's head as text: "python · print('hi') · completed · 250 ms"."""
    found = re.findall(r'<div class="forge-tool-head">(.*?)</div>', plain(html))
    return [Tree(head).text for head in found]


def test_ordinary_markdown_keeps_its_meaning():
    text = ("# Title\n\nSome **bold**, *em*, ~~gone~~, a [link](https://example.com), "
            "`a < b`, a<br>b and <kbd>Ctrl</kbd>.\n\n- one\n- two\n\n3. three\n4. four\n\n"
            "> quoted\n\n| col | n |\n|:--|--:|\n| a | 1 |\n\n---\n\n"
            "```python\nif a < b:\n    print('<script>alert(1)</script>')\n```\n\n"
            "![plot](data:image/png;base64,iVBORw0KGgo=)")
    html = render.markdown_html(text)
    tree = check_html(html)
    got = tags(html)
    for tag in ("h1", "strong", "em", "s", "a", "code", "br", "kbd", "ul", "ol", "li",
                "blockquote", "table", "th", "td", "hr", "pre", "img"):
        assert tag in got, f"<{tag}> missing from {html}"
    assert "<ol start=\"3\">" in html
    assert '<th style="text-align:left">col</th>' in html and 'style="text-align:right"' in html
    # Code is shown as written, as text: the <script> in it is visible, not an element.
    assert "print('<script>alert(1)</script>')" in tree.text and "script" not in got
    assert "a < b" in tree.text
    assert tree.hrefs() == ["https://example.com"]


def test_relative_and_anchor_links_are_kept():
    tree = check_html(render.markdown_html("[data](data/sales.csv) [up](#top) [q](?x=1)"))
    assert tree.hrefs() == ["data/sales.csv", "#top", "?x=1"]


def test_math_keeps_its_tex_for_mathjax():
    html = render.markdown_html(r"Energy $E = mc^2$, a set $\{x_i * y_i\}$, and"
                                "\n\n$$\n\\sum_{i=1}^n x_i\n$$\n\nwhile $5 and $10 stay prose.")
    text = Tree(html).text
    assert r"$E = mc^2$" in text and r"$\{x_i * y_i\}$" in text  # not eaten by Markdown
    assert r"$$\sum_{i=1}^n x_i$$" in text
    assert "$5 and $10 stay prose" in text


def test_unclosed_html_in_model_text_cannot_swallow_the_record():
    step = assistant(part(TextPart, text="<details open><summary>x<div><table>"),
                     part(ToolPart, call_id="c1", tool="python", state="completed",
                          output="after"),
                     status="completed")
    html = render.turn_work_html([step, assistant(part(TextPart, text="end"), status="completed")])
    check_html(html)
    # The tool card is a sibling of the model's text, not inside its unclosed <details>.
    top = plain(html).split("\n")
    assert any(line.startswith('<div class="forge-tool" data-state="completed" data-tool="python">')
               for line in top), html


def test_message_html_is_the_answer_and_a_footer():
    m = assistant(part(TextPart, text="The answer is **42** <img src=x onerror=alert(1)>."),
                  tokens=Tokens(input=1234, output=56), cost=0.0012, status="completed")
    html = render.message_html(m)
    check_html(html)
    # The answer as the live widget showed it: its classes, and their looks inline.
    assert plain(html).startswith('<div class="forge-turn forge-value"><div class="forge-text forge-md">'
                                  "<p>The answer is <strong>42</strong> <img>.</p>")
    assert '<div class="forge-step">1,234 in · 56 out · $0.0012 · openai/fake-model</div>' in plain(html)
    assert 'style="' in html and "var(--jp-" in html  # for viewers without the extension
    assert m._repr_html_() == html


def test_a_message_from_the_python_api_shows_as_html_in_a_fresh_interpreter():
    # message.py cannot import the renderer (ground floor): importing the facade registers it.
    code = ("from forge_jupyter import Forge\n"
            "from forge_jupyter.message import Message, TextPart\n"
            "m = Message(session_id='ses_x', role='assistant', cost=0.5)\n"
            "m.parts = [TextPart(session_id='ses_x', message_id=m.id, text='**hi**')]\n"
            "print(m._repr_html_())\nprint(repr(m))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    assert "<strong>hi</strong>" in out
    assert "$0.50" in out


def test_message_html_says_cost_unknown_estimates_and_errors():
    m = assistant(part(TextPart, text="partial"), tokens=Tokens(input=10, output=2, estimated=True),
                  cost=None, status="aborted",
                  error=ErrorInfo(type="aborted", message="stopped by the <user>"))
    html = render.message_html(m)
    assert "≈10 in · ≈2 out · cost unknown" in html
    # "Stopped: stopped by the user" says it twice (issue 26, bug 9): once.
    assert "<strong>Stopped</strong> by the &lt;user&gt;" in html and "Stopped:" not in html
    assert "Stopped by the <user>" in render.message_text(m)
    other = m.model_copy(update={"error": ErrorInfo(type="aborted", message="stopped: another runner")})
    assert "<strong>Stopped:</strong> another runner" in render.message_html(other)
    failed = m.model_copy(update={"status": "error", "error": ErrorInfo(type="x", message="boom")})
    assert "<strong>Error:</strong> boom" in render.message_html(failed)
    no_text = Message(session_id=SID, role="user", status="completed")
    assert render.message_html(no_text) == "<p><em>(no text)</em></p>"


def test_an_answer_lists_the_pages_its_web_search_cited_as_safe_links():
    """Citations as the providers send them (Anthropic's and OpenAI's), hostile ones beside
    them: each page once as an http(s) link with its title as text; the rest never a link."""
    cited = [{"type": "web_search_result_location", "url": "https://www.python.org/downloads/",
              "title": "Python <b>3.13</b>", "cited_text": "…"},
             {"type": "url_citation", "url_citation": {"url": "https://docs.python.org/3/",
                                                       "title": "What's <new>"}},
             {"url": "javascript:alert(1)", "title": "<img src=x onerror=alert(2)>"},
             {"url": 'https://ex.com/"onmouseover="alert(3)', "title": "quoted"},
             {"url": "https://www.python.org/downloads/", "title": "again"}]
    first = part(TextPart, text="Released in October.", metadata={"citations": cited[:2]})
    second = part(TextPart, text=" More.", metadata={"citations": cited[2:]})
    m = assistant(first, second, status="completed")
    html = render.message_html(m)
    tree = check_html(html)
    links = [dict(a) for tag, a in tree.elements if tag == "a"]
    assert [a["href"] for a in links] == ["https://www.python.org/downloads/",
                                          "https://docs.python.org/3/",
                                          'https://ex.com/"onmouseover="alert(3)']
    assert all(set(a) <= {"href", "title", "target", "rel"} for a in links)
    assert "Sources: " in html and "Python &lt;b&gt;3.13&lt;/b&gt;</a>" in html
    assert "javascript" not in html and "onerror" not in html.replace("&lt;", "")
    text = render.message_text(m)
    assert "Sources:\n- Python <b>3.13</b> <https://www.python.org/downloads/>\n" in text
    assert "- What's <new> <https://docs.python.org/3/>" in text
    assert "Sources" not in render.message_html(assistant(part(TextPart, text="plain")))


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
    html = render.turn_work_html([user, step1, step2])
    tree = check_html(html)
    assert "the prompt" not in tree.text and "FINAL ANSWER" not in tree.text
    assert '<details class="forge-reasoning"><summary>Thought for 1.50 s</summary>' in plain(html)
    assert "think" in tree.text and "Let me run it." in tree.text
    assert heads(html) == ["python · print('hi') · completed · 250 ms"]
    assert "<pre><code>print('hi')\nprint('there')</code></pre>" in html  # the code, readable
    assert "<pre><code>hi\nthere</code></pre>" in html
    assert "100 in · 10 out · cost unknown · openai/fake-model" in tree.text
    assert "200 in" not in tree.text.split("tool call", 1)[1]  # the final footer is the value's
    assert plain(html).startswith('<div class="forge-record forge-turn">\n<div class="forge-header">'
                                  '<span class="forge-summary-line">forge · 2 steps · 1 tool call')
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
    html = render.turn_work_html([compact, step, last], displays={failing.id: [png]})
    check_html(html)
    flat = plain(html)
    assert '<span class="forge-label">Retry 1</span> · waited 500 ms · RateLimitError: slow down' in flat
    assert '<span class="forge-label">Context compacted automatically</span> — context overflow' in flat
    assert heads(html) == ["write · x.py · error · 0 ms"]
    assert '<pre class="forge-tool-error"><code>denied: `no`</code></pre>' in flat
    assert f'<details open=""><summary>Patch x.py +1 −1</summary>\n<pre><code>{diff.rstrip()}' in html
    assert '<img src="data:image/png;base64,iVBORw0KGgo=" alt="image/png 10×10">' in html


def test_the_person_sees_the_chart_not_the_placeholder_the_model_reads():
    said = "image/png 572×454, shown to the user"
    plot = part(ToolPart, call_id="c1", tool="python", state="completed", input={"code": "plot()"},
                output=f"mean 3.5\n[{said}]", metadata={"displays": [said]}, time_start=1.0, time_end=2.0)
    only = part(ToolPart, call_id="c2", tool="python", state="completed", input={"code": "plot()"},
                output=f"[{said}]", metadata={"displays": [said]}, time_start=1.0, time_end=2.0)
    png = {"image/png": "iVBORw0KGgo=", "text/plain": "image/png 572×454"}
    turn = [assistant(plot, only, status="completed"), assistant(part(TextPart, text="ok"), status="completed")]
    html = render.turn_work_html(turn, displays={plot.id: [png], only.id: [png]})
    check_html(html)
    assert said not in html and html.count("<img ") == 2
    assert "<pre><code>mean 3.5</code></pre>" in html and "(no output)" not in html
    # Where no image is shown (none reached this view), the line says what happened to it.
    assert said in render.turn_work_html(turn)


def test_long_outputs_and_arguments_fold_and_are_clipped():
    long_out = "\n".join(f"line {i}" for i in range(20_000))
    tool = part(ToolPart, call_id="c1", tool="python", state="completed",
                input={"code": "x\n" * 5_000, "n": 3}, output=long_out)
    html = render.turn_work_html([assistant(tool, status="completed"),
                                  assistant(part(TextPart, text="ok"), status="completed")])
    text = check_html(html).text
    assert "<summary>Output · 20,000 lines</summary>" in html
    assert "<summary>Arguments</summary>" in html
    assert '<span class="forge-arg-key">n</span><span class="forge-sep">: </span><code>3</code>' in plain(html)
    assert "more characters in the store" in text and "line 19999" not in text


def test_empty_turn_renders_nothing():
    assert render.turn_work_html([]) == "" and render.turn_work_text([]) == ""


def test_a_background_turn_record_can_end_with_its_answer():
    last = assistant(part(TextPart, text="the answer"), tokens=Tokens(input=3, output=1),
                     cost=None, status="completed")
    html = render.turn_work_html([last], with_answer=True)
    value = plain(render.message_html(last))
    inner = value.removeprefix('<div class="forge-turn forge-value">').removesuffix("</div>")
    assert inner != value and inner in plain(html)
    assert "the answer" not in render.turn_work_html([last])
    assert render.turn_work_text([last], with_answer=True).endswith(render.message_text(last))


def denied_call(tool: str, **decision) -> ToolPart:
    return part(ToolPart, call_id=f"c-{tool}", tool=tool, state="error", input={"code": "x"},
                error=f"Permission denied: {tool} is not allowed here.", time_start=2.0,
                time_end=2.0, metadata={"permission": "denied",
                                        **({"decision": decision} if decision else {})})


def test_a_denied_call_says_denied_and_who_answered_not_error():
    calls = [
        denied_call("python", answer="deny", by="widget", reason="not now"),
        denied_call("write", answer="deny", by="rule", rule="write:locked/*=deny"),
        denied_call("edit", answer="deny", by="forge", reason="no one can answer approvals here"),
        denied_call("sql"),  # a row written before decisions were kept on the part
    ]
    allowed = part(ToolPart, call_id="c-ok", tool="python", state="completed", input={"code": "1"},
                   output="1", time_start=1.0, time_end=1.1, title="1",
                   metadata={"decision": {"answer": "once", "by": "widget"}})
    turn = [assistant(*calls, allowed, status="completed"),
            assistant(part(TextPart, text="done"), status="completed")]
    html = render.turn_work_html(turn)
    check_html(html)
    assert 'data-state="error"' not in html
    assert heads(html)[:4] == ["python · x · denied · 0 ms", "write · x · denied · 0 ms",
                               "edit · x · denied · 0 ms", "sql · x · denied · 0 ms"]
    assert "<strong>Denied by you, in the widget — not now</strong>" in html
    assert "<strong>Denied by rule write:locked/*=deny</strong>" in html
    assert "<strong>Denied by forge — no one can answer approvals here</strong>" in html
    assert "<strong>Denied</strong>" in html
    assert "<code>Permission denied: write is not allowed here.</code></pre>" in html
    assert "<em>Allowed once by you, in the widget</em>" in html
    text = render.turn_work_text(turn)
    assert "[python] denied by you, in the widget — not now" in text
    assert "[write] denied by rule write:locked/*=deny" in text
    assert "[sql] denied: Permission denied: sql is not allowed here." in text


def test_an_answer_from_the_side_panel_says_so():
    from forge_jupyter.render.record import decision_text

    assert decision_text({"answer": "once", "by": "panel"}) == "Allowed once by you, in the side panel"
    assert decision_text({"answer": "deny", "by": "panel", "reason": "not now"}) == (
        "Denied by you, in the side panel — not now")


def test_a_tool_card_does_not_repeat_a_title_that_is_the_tools_name():
    same = part(ToolPart, call_id="c1", tool="variables", state="completed", input={},
                output="df: DataFrame", time_start=1.0, time_end=1.082, title="variables")
    other = part(ToolPart, call_id="c2", tool="read", state="completed", input={"path": "a.txt"},
                 output="hi", time_start=1.0, time_end=1.01, title="a.txt")
    turn = [assistant(same, other, status="completed"),
            assistant(part(TextPart, text="ok"), status="completed")]
    html = render.turn_work_html(turn)
    assert heads(html) == ["variables · completed · 82 ms", "read · a.txt · completed · 10 ms"]
    text = render.turn_work_text(turn)
    assert "[variables] completed in 82 ms\n" in text and "[read] completed in 10 ms — a.txt" in text


def test_the_demo_models_quoted_tool_output_keeps_its_line_breaks():
    from forge_jupyter.demo.responder import _fence

    output = "df: DataFrame (3, 2)\nx: int = 3\n```\nnot the end"
    answer = assistant(part(TextPart, text=f"The `variables` tool returned:\n\n{_fence(output)}"),
                       status="completed")
    html = render.message_html(answer)
    check_html(html)
    assert "<pre><code>df: DataFrame (3, 2)\nx: int = 3\n```\nnot the end\n</code></pre>" in html


def test_the_record_of_a_real_turn_says_who_denied_or_allowed_each_call(make_forge, server):
    """Through the prompt path and the permission gate into a DuckDB file, read back from it:
    a rule, forge (no one to ask), a person who denied, a person who allowed."""
    from forge_jupyter.session.approval import Answer
    from forge_jupyter.testing import Turn, tool_call
    from forge_jupyter.tools.permission import Rule

    forge = make_forge("duckdb", permissions=[Rule("save", "*locked*", "deny")])
    saved: list[str] = []

    @forge.tool(mutating=True)
    def save(name: str) -> str:
        """Save something (the build agent asks first)."""
        saved.append(name)
        return f"saved {name}"

    session = forge.session("decisions")
    server.add(Turn([tool_call("save", {"name": "locked-file"})]),
               Turn([tool_call("save", {"name": "nobody-asked"})]), Turn.text("ok"))
    session.prompt("save two things")  # the rule, then forge: no approval handler yet
    answers = iter([Answer("deny", "not on Fridays", "bob"), Answer("once", None, "widget")])
    forge.on_approval(lambda request: next(answers))
    server.add(Turn([tool_call("save", {"name": "refused"})]),
               Turn([tool_call("save", {"name": "allowed"})]), Turn.text("done"))
    session.prompt("save two more")
    assert saved == ["allowed"]

    forge.flush()
    stored = list(forge.store.iter_timeline(session.id))  # what a restarted kernel reads
    calls = {p.input["name"]: p for m in stored for p in m.tool_parts}
    assert calls["locked-file"].metadata["decision"] == {
        "answer": "deny", "by": "rule", "rule": "save(*locked*) → deny", "reason": None}
    assert calls["nobody-asked"].metadata["decision"]["by"] == "forge"
    assert calls["refused"].metadata["decision"] == {
        "answer": "deny", "by": "bob", "rule": None, "reason": "not on Fridays"}
    html = render.turn_work_html(stored)
    check_html(html)
    assert 'data-state="error"' not in html and html.count('data-state="denied"') == 3
    assert "<strong>Denied by rule save(*locked*) → deny</strong>" in html
    assert "<strong>Denied by forge — no one can answer approvals here" in html
    assert "<strong>Denied by bob — not on Fridays</strong>" in html
    assert "<em>Allowed once by you, in the widget</em>" in html
    assert "[save] denied by bob — not on Fridays" in render.turn_work_text(stored)
