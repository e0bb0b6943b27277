"""Sessions and history as a person reads them: every session has a title (the first line of its
first prompt) and the models it ran on; sessions() and history() display a person's columns
with short ids while the DataFrames keep every column and the full ids. Through the real
prompt path (litellm over loopback HTTP to the fake model server), on DuckDB and in memory."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from forge_jupyter import frames
from forge_jupyter.errors import NotFound
from forge_jupyter.ids import match_short, short
from forge_jupyter.session.title import TITLE_CHARS, title_of
from forge_jupyter.testing import Turn
from tests.frames.frames_helpers import PRICED, SMALL

SECRET = "s3cr3t-Value-9f8e7d6c5b4a"
HOSTILE = '<img src=x onerror="alert(1)"><script>alert(2)</script>'
SHORT = re.compile(r"\b(ses|msg)_…[0-9A-Za-z]{6}\b")
FULL = re.compile(r"\b(ses|msg)_[0-9a-f]{16}[0-9A-Za-z]{10}\b")


def answer(server, *texts: str) -> None:
    server.add(*(Turn.text(t, usage=(50, 5)) for t in texts))


def shown_columns(html: str) -> list[str]:
    head = html.split("</thead>")[0]
    return [c for c in re.findall(r"<th>([^<]*)</th>", head) if c]


# ------------------------------------------------------------------------------ titles


def test_title_is_the_first_line_with_words_trimmed_and_bounded():
    assert title_of("\n  \n   Which   columns\thave gaps?  \nand more") == "Which columns have gaps?"
    assert title_of("  \n\t\n") is None and title_of("") is None and title_of(None) is None
    long = " ".join(f"word{i}" for i in range(40))
    cut = title_of(long)
    assert len(cut) <= TITLE_CHARS and cut.endswith("…") and long.startswith(cut[:-1])
    assert not cut[:-1].endswith(" ") and cut[:-1].split()[-1] in long.split()  # a whole word
    assert title_of("x" * 500) == "x" * (TITLE_CHARS - 1) + "…"  # one long word: cut inside


@pytest.mark.parametrize("kind", ["memory", "duckdb"])
def test_a_prompted_session_has_a_scrubbed_title_and_the_models_it_ran_on(
        fresh, server, kind, monkeypatch):
    monkeypatch.setenv("BILLING_SERVICE_TOKEN", SECRET)
    forge = fresh(kind)
    session = forge.session()  # unnamed, as the notebook's current session is
    answer(server, "first answer", "second answer")
    session.prompt(f"\n   Log in with {SECRET} and   count the rows \nthen plot them")
    session.prompt("A second question must not retitle it", model=SMALL)

    stored = forge.store.get_session(session.id).title
    assert stored == "Log in with [secret:BILLING_SERVICE_TOKEN] and count the rows"
    row = forge.sessions().set_index("session_id").loc[session.id]
    assert row["title"] == stored
    assert row["models"] == f"{PRICED}, {SMALL}"  # first used first
    assert pd.isna(row["model"])  # no model was set for the session: Forge.model still rules
    # what a person sees: no NaN, no secret
    for shown in (repr(forge.sessions()), forge.sessions()._repr_html_()):
        assert "NaN" not in shown and SECRET not in shown
        assert "Log in with [secret:BILLING_SERVICE_TOKEN]" in shown
        assert f"{PRICED}, {SMALL}" in shown


def test_a_long_first_line_makes_a_bounded_title_and_a_set_title_is_kept(fresh, server):
    forge = fresh("duckdb")
    words = " ".join(f"column{i}" for i in range(30))
    answer(server, "one", "two")
    wordy = forge.session()
    wordy.prompt(words)
    assert forge.store.get_session(wordy.id).title == title_of(words)
    assert len(title_of(words)) <= TITLE_CHARS

    named = forge.session("report")
    forge.store.update_session(named.info.model_copy(update={"title": "Quarterly report"}))
    named.prompt("what is in the report?")
    assert forge.store.get_session(named.id).title == "Quarterly report"


@pytest.mark.parametrize("kind", ["memory", "duckdb"])
def test_sessions_without_a_stored_title_show_their_first_prompt(fresh, server, kind):
    forge = fresh(kind)
    answer(server, "one", "two")
    old = forge.session("old")
    old.prompt("  How many orders came from Lima?\nDetails follow.")
    old.prompt("And from Cusco?")
    # a session as files written before titles were stored hold it: no title
    info = forge.store.get_session(old.id)
    forge.store.update_session(info.model_copy(update={"title": None}))
    fork = old.fork(name="what-if")
    never = forge.session("never-prompted")

    table = forge.sessions().set_index("name")
    assert table.loc["old", "title"] == "How many orders came from Lima?"
    # a fork is titled as its parent (here: its timeline's first prompt), marked
    assert table.loc["what-if", "title"] == "How many orders came from Lima? (fork)"
    assert pd.isna(table.loc["never-prompted", "title"]) and never.info.title is None
    assert pd.isna(table.loc["what-if", "models"])  # a fork has answered nothing itself
    shown = repr(forge.sessions())
    assert "NaN" not in shown and "How many orders came from Lima?" in shown
    assert fork.id not in shown and short(fork.id) in shown


# ------------------------------------------------------------------------------ display


def test_sessions_display_short_ids_while_the_data_keep_every_column_and_full_ids(fresh, server):
    forge = fresh("duckdb")
    answer(server, "fine", "also fine")
    first = forge.session()
    first.prompt(HOSTILE + " what now?")
    second = forge.session()
    second.prompt("Second session\nwith a second line")
    table = forge.sessions()

    assert list(table.columns) == list(frames.SESSIONS)  # every column stays
    assert table.session_id.tolist() == [first.id, second.id]  # full ids in the data
    html, text = table._repr_html_(), repr(table)
    assert shown_columns(html) == ["session_id", "title", "models", "messages", "tokens_input",
                                   "tokens_output", "cost", "updated_at"]
    for shown in (html, text):
        assert short(first.id) in shown and short(second.id) in shown
        assert not FULL.search(shown)
        assert "directory" not in shown and "columns shown" in shown
    # the hostile title is text: escaped in the HTML, never markup
    assert "<img" not in html and "<script" not in html and "&lt;img src=x" in html
    assert "with a second line" not in html  # a title is one line
    # rows taken from it keep the display; a reshaped frame shows all of itself
    assert short(second.id) in repr(table.tail(1)) and first.id not in repr(table.tail(1))
    assert short(first.id) in repr(table[table.messages > 0])
    picked = table[["session_id", "directory"]]
    assert first.id in repr(picked) and "directory" in picked._repr_html_()
    assert first.id in table.to_string()  # the explicit ask prints everything


def test_history_displays_a_readable_table(run):
    alpha = run.sessions["alpha"]
    visible = run.forge.history(alpha)
    html = visible._repr_html_()
    assert list(visible.columns) == list(frames.HISTORY)
    # columns that say something here are shown: alpha's view starts at a compaction summary
    # and called tools; every message completed
    assert shown_columns(html) == ["pos", "message_id", "role", "summary", "text", "tool_calls",
                                   "tokens_input", "tokens_output", "cost"]
    gamma = shown_columns(run.forge.history(run.sessions["gamma"])._repr_html_())
    assert gamma == ["pos", "message_id", "role", "status", "text", "tokens_input",
                     "tokens_output", "cost"]  # an error, no summary, no tool call
    cells = re.findall(r"<td>([^<]*)</td>", html)
    assert max(len(c) for c in cells) <= 60 and not any("\n" in c for c in cells)
    assert 'class="dataframe forge-frame"' in html and "white-space: nowrap" in html
    assert any(c.endswith("…") for c in cells)  # a long text is cut, not wrapped
    assert visible.text.str.len().max() > 60  # … while the data keep all of it
    assert set(SHORT.findall(html)) == {"msg"} and not FULL.search(html)
    assert visible.message_id.str.match(FULL).all()

    everything = run.forge.history(alpha, include_superseded=True)
    assert shown_columns(everything._repr_html_())[-1] == "visible_to_model"  # it says something
    assert "False" in everything._repr_html_()


# ------------------------------------------------------------------------------ short ids


def test_a_short_id_as_shown_finds_its_session(run):
    forge = run.forge
    alpha = run.sessions["alpha"]
    abbreviated = short(alpha.id)
    for spelled in (abbreviated, abbreviated.replace("…", "..."), "…" + abbreviated[-6:],
                    f"  {abbreviated} "):
        assert frames.session_id(forge.store, spelled) == alpha.id, spelled
    assert forge.history(abbreviated).message_id.tolist() == forge.history(alpha).message_id.tolist()
    theirs = run.other.sessions().session_id[0]
    with pytest.raises(NotFound):  # another tenant's session is not there to abbreviate
        frames.session_id(forge.store, short(theirs))
    for not_short in ("ses_…", "ses_…zz zz", "xyz_…" + alpha.id[-6:], "alpha…"):
        with pytest.raises(NotFound):
            frames.session_id(forge.store, not_short)


def test_an_ambiguous_short_id_says_so():
    ids = ["ses_01a22d256b640000Z14DylAAAAAA", "ses_01a22d256b650000Z14DylBAAAAA"]
    with pytest.raises(LookupError, match="could be any of"):
        match_short("…AAAAA", ids)
    assert match_short("ses_…AAAAAA", ids) == ids[0]
    assert match_short("msg_…AAAAAA", ids) is None
    assert short("not-an-id") == "not-an-id" and short("ses_short") == "ses_short"
