"""Text entering the system is made valid at the boundary (issue 10, item 3).

A lone surrogate — a model's ``"\\ud800"`` in text, reasoning or tool arguments, a prompt, a
file name that is not UTF-8 — becomes U+FFFD where it enters: the turn completes, the store
holds valid rows, the next prompt works, and so do the DataFrames and ``close()``. Through the
real prompt path: the fake model server over HTTP, real litellm, a real DuckDB file.
"""

from __future__ import annotations

import json
import os

import duckdb
import pytest

from forge_jupyter.testing import Turn, reasoning, text, tool_call

BAD = "\ud800"  # a lone high surrogate: valid in a Python str, not in UTF-8
FFFD = "\ufffd"


def _stored_strings(db) -> list[str]:
    """Every value of every table of the file, as text (raw SQL, after the Forge closed)."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        tables = [r[0] for r in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE'"
        ).fetchall()]
        return [json.dumps(con.execute(f'SELECT * FROM "{t}"').fetchall(), default=str,
                           ensure_ascii=False) for t in tables]
    finally:
        con.close()


def _valid(s: str) -> bool:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_a_model_emitting_lone_surrogates_wedges_nothing(make_forge, server, tmp_path, protocol):
    got: list[str] = []

    def echo(words: str) -> str:
        """Say it back.

        words: what to say
        """
        got.append(words)
        return f"echo: {words}"

    server.add(
        Turn([reasoning(f"thinking {BAD} hard", chunk=3), text(f"hello {BAD} world", chunk=3),
              tool_call("echo", {"words": f"a{BAD}b"})]),
        Turn.text(f"after {BAD} the tool"),
        Turn.text("the second prompt works"),
    )
    forge = make_forge(db="duckdb", protocol=protocol, tools=[echo])
    session = forge.session("s")
    answer = session.prompt("go")
    assert answer.status == "completed" and answer.text == f"after {FFFD} the tool"

    first = session.messages()[1]
    assert [p.text for p in first.parts if p.type == "reasoning"] == [f"thinking {FFFD} hard"]
    assert f"hello {FFFD} world" in first.text
    call = first.tool_parts[0]
    assert call.state == "completed" and call.input == {"words": f"a{FFFD}b"}
    assert got == [f"a{FFFD}b"] and call.output == f"echo: a{FFFD}b"  # the tool got valid text

    again = session.prompt("again")
    assert again.status == "completed" and again.text == "the second prompt works"
    assert FFFD in json.dumps(server.requests[2].messages, ensure_ascii=False)

    # the DataFrames read the rows back; the store closes
    parts = forge.parts(session)
    assert parts.text.str.contains(FFFD, na=False).any()
    assert len(forge.tool_calls(session)) == 1 and len(forge.messages(session)) == 5
    forge.close()
    stored = _stored_strings(tmp_path / "forge.duckdb")
    assert all(_valid(s) for s in stored) and any(f"hello {FFFD} world" in s for s in stored)


def test_a_prompt_with_a_lone_surrogate_is_stored_and_sent_valid(make_forge, server, tmp_path):
    server.add(Turn.text("seen"), Turn.text("and again"))
    forge = make_forge(db="duckdb")
    session = forge.session("s")
    answer = session.prompt(f"what about {BAD} this, and a pair \ud83d\ude00?")
    assert answer.text == "seen"
    user = session.messages()[0]
    assert user.text == f"what about {FFFD} this, and a pair 😀?"
    assert server.requests[0].messages[-1]["content"] == user.text
    assert session.prompt("next").text == "and again"
    forge.close()
    assert all(_valid(s) for s in _stored_strings(tmp_path / "forge.duckdb"))


def test_a_file_name_that_is_not_utf8_is_listed_valid(make_forge, server, tmp_path):
    root = tmp_path / "work"
    root.mkdir()
    fd = os.open(os.fsencode(root) + b"/bad\xff name.txt", os.O_CREAT | os.O_WRONLY, 0o644)
    os.write(fd, b"data\n")
    os.close(fd)
    (root / "good.txt").write_text("fine\n")
    server.add(Turn([tool_call("list", {"path": "."}), tool_call("glob", {"pattern": "*.txt"})]),
               Turn.text("listed"), Turn.text("still here"))
    forge = make_forge(db="duckdb", builtin_tools=True, root=root)
    session = forge.session("s")
    assert session.prompt("what files are there?").text == "listed"
    listing, found = session.messages()[1].tool_parts
    for call in (listing, found):
        assert call.state == "completed", call.error
        assert f"bad{FFFD} name.txt" in call.output and "good.txt" in call.output
    assert session.prompt("and now?").text == "still here"
    forge.close()
    assert all(_valid(s) for s in _stored_strings(tmp_path / "forge.duckdb"))
