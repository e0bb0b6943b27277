"""End to end (issue 15): a compaction writes the daily log, and a later session finds the
fact through ``memory_search`` — through real litellm and the fake model server, vectors too."""

from __future__ import annotations

import datetime as dt
import json

import pandas as pd
import pytest

from forge_jupyter.testing import Turn, tool_call


def say(text: str) -> Turn:
    return Turn.text(text, chunk=256)


SALES = pd.DataFrame({"region": ["West", "East", "North"], "revenue": [1204332, 998120, 450977]})
QUERY = "SELECT region, sum(revenue) AS total FROM sales GROUP BY region ORDER BY total DESC"


def memory_forge(make_forge, tmp_path, **kw):
    kw.setdefault("namespace", {"sales": SALES})
    return make_forge(db="duckdb", builtin_tools=True, root=tmp_path,
                      memory_embedding_model="openai/fake-embedding", **kw)


def test_compaction_logs_what_it_summarized_and_a_later_session_finds_it(make_forge, server, tmp_path):
    server.add(Turn([tool_call("sql", {"query": QUERY})]),
               say("The West region had the highest revenue: 1,204,332."),
               say("## Goal\nFind the best region.\n## Decisions\nWest."))
    forge = memory_forge(make_forge, tmp_path)
    first = forge.session("analysis")
    first.prompt("Which region had the highest revenue?")
    first.compact()

    today = dt.date.today()
    log = tmp_path / "memory" / f"{today.isoformat()}.md"
    text = log.read_text()
    assert text.startswith(f"# Memory log {today.isoformat()}")
    assert f"session analysis ({first.id})" in text
    assert f"### [research][tool:sql] {QUERY}" in text and "1204332" in text
    assert "### Asked\n\n> Which region had the highest revenue?" in text
    assert "### Decided\n\nThe West region had the highest revenue: 1,204,332." in text
    [event] = forge.store.events(first.id, type="compaction").items
    assert event.data["memory_log"] == log.name
    forge.close()

    # a later session, in a new Forge on the same store: the model asks its memory
    server.add(Turn([tool_call("memory_search", {"query": "region with the highest revenue"})]),
               say("Last time: West, 1,204,332."))
    later = memory_forge(make_forge, tmp_path)
    answer = later.session("next", new=True).prompt("What did we find about regions before?")
    [part] = later.store.get_message(answer.parent_id and later.session("next").messages()[1].id).tool_parts
    assert part.tool == "memory_search" and part.state == "completed"
    assert part.output.startswith("Hybrid search (keyword 0.3, vector 0.7, half-life 7 days).")
    assert f"[1] {log.name}:" in part.output and "1204332" in part.output
    shown = json.dumps(server.requests[-1].messages)  # what the model read next
    assert "1204332" in shown and log.name in shown
    assert server.embedding_requests, "the vectors came through litellm over HTTP"


def test_each_message_is_logged_once_across_compactions(make_forge, server, tmp_path):
    server.add(Turn([tool_call("sql", {"query": QUERY})]), say("West leads."),
               say("Noted the quarter."), say("## Goal\nfirst summary"),
               say("Done with the north."), say("## Goal\nsecond summary"))
    forge = memory_forge(make_forge, tmp_path)
    session = forge.session("s")
    session.prompt("Which region leads?")
    session.prompt("Remember it is Q3.")
    session.compact()  # summarizes the first turn, keeps the second verbatim
    session.prompt("Now look at the north.")
    session.compact()  # summarizes the kept turn; the first summary is not logged again
    text = (tmp_path / "memory" / f"{dt.date.today().isoformat()}.md").read_text()
    assert text.count("[research][tool:sql]") == 1 and text.count("> Which region leads?") == 1
    assert text.count("> Remember it is Q3.") == 1 and text.count("compacted\n") == 2
    assert "first summary" not in text


def test_a_memory_folder_that_cannot_be_written_never_stalls_compaction(make_forge, server, tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the memory folder should be")
    server.add(Turn([tool_call("sql", {"query": QUERY})]), say("West."), say("## Goal\nx"))
    forge = memory_forge(make_forge, tmp_path, memory_dir=blocker)
    session = forge.session("s")
    session.prompt("best region?")
    summary = session.compact()
    assert summary.summary and summary.status == "completed"
    notices = [e.data["message"] for e in forge.store.events(session.id, type="notice").items]
    assert any("long-term memory log" in n and "Forge.memory_dir" in n for n in notices)


def test_research_results_keep_a_longer_extract_than_other_tools(make_forge, server, tmp_path):
    big = pd.DataFrame({"word": [f"w{i:05d}" for i in range(3000)]})
    server.add(Turn([tool_call("sql", {"query": "SELECT string_agg(word, ' ') AS s FROM big"}),
                     tool_call("python", {"code": "print(' '.join(big.word))"})]),
               say("done"), say("## Goal\nx"))
    forge = memory_forge(make_forge, tmp_path, namespace={"big": big},
                         permissions=["python:*=allow"])
    session = forge.session("s")
    session.prompt("list the words")
    session.compact()
    text = (tmp_path / "memory" / f"{dt.date.today().isoformat()}.md").read_text()
    sql_block = text.split("[research][tool:sql]")[1].split("### ")[0]
    python_block = text.split("[tool:python]")[1].split("### ")[0]
    assert "[research][tool:python]" not in text
    assert 4_900 < len(sql_block) < 5_400 and 1_900 < len(python_block) < 2_400
    assert "more characters]" in sql_block and "more characters]" in python_block


@pytest.mark.parametrize("rule", ["memory_get:private/*=deny", "memory_get:private/**=deny"])
def test_permission_rules_match_the_memory_file_however_it_is_spelled(make_forge, server, tmp_path, rule):
    (tmp_path / "memory" / "private").mkdir(parents=True)
    (tmp_path / "memory" / "private" / "pay.md").write_text("salary 1\n")
    (tmp_path / "outside.md").write_text("salary 2\n")
    spellings = ["private/pay.md", "./private/pay.md", "private//pay.md", "notes/../private/pay.md",
                 "../memory/private/pay.md", str(tmp_path / "memory" / "private" / "pay.md")]
    server.add(Turn([tool_call("memory_get", {"path": p}) for p in spellings]
                    + [tool_call("memory_get", {"path": "../outside.md"})]), say("ok"))
    forge = memory_forge(make_forge, tmp_path, permissions=[rule])
    answer = forge.session("s").prompt("read my pay")
    *denied, escaped = forge.session("s").messages()[1].tool_parts
    for part in denied:
        assert part.state == "error" and "Permission denied" in part.error, part.input
        assert "private/pay.md" in part.error and "salary" not in part.error
    assert escaped.state == "error" and "outside" in escaped.error and "salary" not in escaped.error
    assert answer.status == "completed"


def test_memory_get_numbers_lines_and_cuts_long_ones(make_forge, server, tmp_path):
    folder = tmp_path / "memory"
    folder.mkdir()
    (folder / "MEMORY.md").write_text("first\n" + "y" * 5000 + "\nthird\n")
    server.add(Turn([tool_call("memory_get", {"path": "MEMORY.md", "start_line": 2})]), say("ok"))
    forge = memory_forge(make_forge, tmp_path)
    forge.session("s").prompt("read it")
    [part] = forge.session("s").messages()[1].tool_parts
    assert part.output.startswith("     2\t" + "y" * 2000 + "… [line cut at 2,000 characters")
    assert "     3\tthird" in part.output and "(End of file: 3 lines.)" in part.output


def test_memory_turned_off_offers_no_tools_and_writes_no_log(make_forge, server, tmp_path):
    from forge_jupyter.errors import InvalidOption

    server.add(Turn([tool_call("sql", {"query": QUERY})]), say("West."), say("## Goal\nx"),
               say("on again"))
    forge = memory_forge(make_forge, tmp_path, memory_long_term=False)
    session = forge.session("s")
    session.prompt("best region?")
    session.compact()
    assert not {"memory_search", "memory_get"} & set(server.requests[0].tools)
    assert not (tmp_path / "memory").exists()
    with pytest.raises(InvalidOption, match="memory_long_term"):
        forge.memory_search("west")
    forge.set_memory(tmp_path / "memory", enabled=True)
    session.prompt("and now?")
    assert {"memory_search", "memory_get"} <= set(server.requests[-1].tools)
