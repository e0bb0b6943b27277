"""The mentions of a prompt (notebook/mentions/grammar.py), read from many spellings: what
points at something, what is only text, and what is refused with how to write it."""

from __future__ import annotations

import pytest

from forge_jupyter.notebook.mentions.grammar import MAX_COUNT, MentionError, parse


def kinds(prompt: str) -> list[tuple[str, str]]:
    return [(m.kind, m.value) for m in parse(prompt).mentions]


@pytest.mark.parametrize("prompt, expected", [
    ("@df", [("name", "df")]),
    ("what is in @df?", [("name", "df")]),
    ("compare @df and @df2.", [("name", "df"), ("name", "df2")]),
    ("(@sales_2024)", [("name", "sales_2024")]),
    ("@_private, @x1", [("name", "_private"), ("name", "x1")]),
    ("@df.shape looks wrong", [("name", "df")]),  # the name, then text
    ("@df @df @df", [("name", "df")]),  # once each
    ("why did @error happen", [("error", "")]),
    ("@errors is a list", [("name", "errors")]),
    ("@In[3]", [("in", "3")]),
    ("see @In[12], then @In[7].", [("in", "12"), ("in", "7")]),
    ("@In[007]", [("in", "7")]),
    (f"@In[{MAX_COUNT}]", [("in", str(MAX_COUNT))]),
    ("@In alone", [("name", "In")]),
    ("read @file:data/sales.csv.", [("file", "data/sales.csv")]),
    ("read @file:notes.md, then", [("file", "notes.md")]),
    ("is @file:a.txt?", [("file", "a.txt")]),
    ("(see @file:data(1).csv)", [("file", "data(1).csv")]),
    ('open @file:"my data.csv" now', [("file", "my data.csv")]),
    ("@file:../secret.txt", [("file", "../secret.txt")]),  # resolve.py refuses it, not the grammar
    ("@cell:3f2a9c1e Fix the error in this cell.", [("cell", "3f2a9c1e")]),
    ("@cell:a-b_C9, @cell:x.", [("cell", "a-b_C9"), ("cell", "x")]),
    ("@df\n@error\n@In[2]", [("name", "df"), ("error", ""), ("in", "2")]),
])
def test_mentions_are_read(prompt, expected):
    assert kinds(prompt) == expected


@pytest.mark.parametrize("prompt", [
    "mail bob@example.com about it",
    "a@b",
    "x.@y",
    "@@df is not a mention",
    "@ alone",
    "@1st place",
    "@",
    "price: 3 @ 4",
    "`@df` in backticks",
    "``@df `x` ``",
    "```python\n@property\ndef x(self): ...\n```",
    "~~~\n@decorator\n~~~",
    "    ```\n@df\n    ```",
    "@naïve",
    "50%@x",
    "path/to@host",
    "",
])
def test_what_is_no_mention(prompt):
    assert kinds(prompt) == []


def test_a_double_at_is_a_literal_at_and_code_is_left_as_written():
    parsed = parse("email me @@home, or `a @@ b`, and @@@df")
    assert parsed.text == "email me @home, or `a @@ b`, and @@df"
    assert kinds("@@@df") == [("name", "df")]  # @@ then @df


def test_the_text_keeps_the_mentions_as_written():
    prompt = "Look at @df and @In[2] and @file:\"a b.txt\"; @cell:x1 said @error."
    assert parse(prompt).text == prompt


def test_a_mention_next_to_code_stops_at_the_code():
    assert kinds("see @df`x`") == [("name", "df")]
    assert kinds("```\ncode\n```\n@df after the fence") == [("name", "df")]
    assert kinds("```\nunclosed @df") == []


def test_a_lone_backtick_does_not_hide_what_follows():
    assert kinds("it's 5` long, see @df") == [("name", "df")]


def test_a_mention_written_back_reads_the_same():
    for prompt in ("@df", "@In[4]", "@error", "@file:a/b.csv", '@file:"a b.csv"', "@cell:zz-1"):
        [m] = parse(prompt).mentions
        assert m.written == prompt
        assert (m.start, m.end) == (0, len(prompt))


@pytest.mark.parametrize("prompt, says", [
    ("@In[0]", "@In[N]"),
    (f"@In[{MAX_COUNT + 1}]", "10,000,000"),
    ("@In[-1]", "@In[N]"),
    ("@In[x]", "@In[N]"),
    ("@In[", "@In[N]"),
    ("@In[١]", "@In[N]"),  # an Arabic-Indic digit is no execution count
    ("@file: nothing", "@file: needs a path"),
    ("@file:", "@file: needs a path"),
    ('@file:""', "@file: needs a path"),
    ("@file:" + "a" * 5000, "at most 4,096"),
    ("@cell:", "@cell: needs a cell id"),
    ("@cell:" + "a" * 65, "@cell: needs a cell id"),
    ("@cell:!", "@cell: needs a cell id"),
    ("a\0b", "NUL"),
    (" ".join(f"@v{i}" for i in range(21)), "more than 20"),
])
def test_misspelled_mentions_are_refused_with_how_to_write_them(prompt, says):
    with pytest.raises(MentionError) as err:
        parse(prompt)
    assert says in str(err.value)
    assert "\n" not in str(err.value)
