"""The ``sql`` tool cannot write, whatever the model sends, under every agent (issue 10, item 1).

Each payload is a tool call the fake model server sends through real litellm; what is checked
is what the person would see: the tool part in the store, and the files in the session's
directory. Relative paths resolve against the session's directory, not the process's cwd.
"""

from __future__ import annotations

import os

import pandas as pd
import pytest

from forge_jupyter.testing import Turn, tool_call

ORIGINAL = "a,b\n1,2\n3,4\n"

# Every one of these would create or overwrite a file if it ran. ``{new}`` is a path that must
# not come to exist; ``data.csv`` is a file of the session that must keep its bytes.
WRITERS = [
    "EXPLAIN ANALYZE COPY (SELECT 42 AS a) TO '{new}'",
    "explain  analyze copy (select 42 as a) to '{new}'",
    "/* plan */ EXPLAIN -- look\n  ANALYZE COPY (SELECT 42 AS a) TO '{new}' (FORMAT csv)",
    "EXPLAIN ANALYZE COPY (SELECT 42 AS a) TO 'data.csv' (USE_TMP_FILE false)",
    "EXPLAIN COPY (SELECT 42 AS a) TO '{new}'",
    "WITH x AS (COPY (SELECT 42 AS a) TO '{new}') SELECT 1",
    "with x as (copy (select 42 as a) to 'data.csv' (use_tmp_file false)) "
    "select * from read_csv('data.csv')",
    "WITH a AS (WITH b AS (COPY (SELECT 42 AS a) TO '{new}') SELECT 1) SELECT * FROM a",
    "COPY (SELECT 42 AS a) TO '{new}'",
    "copy frame TO 'data.csv'",
    "SELECT * FROM query('COPY (SELECT 42 AS a) TO ''{new}''')",
    "SELECT * FROM read_csv('data.csv'), query('WITH x AS (COPY (SELECT 42 AS a) TO "
    "''data.csv'' (USE_TMP_FILE false)) SELECT 1')",
    "SELECT 1; COPY (SELECT 42 AS a) TO '{new}'",
    "SELECT 1 -- harmless?\n; COPY (SELECT 42 AS a) TO '{new}'",
    "EXPORT DATABASE '{new}'",
    "ATTACH '{new}' AS other",
    "CREATE TEMP TABLE t AS SELECT 42",
    "SET enable_external_access = true",
    "PRAGMA enable_profiling",
    "SELECT * FROM enable_logging(storage := 'file', storage_path := '{new}')",
    "INSTALL httpfs",
    "LOAD parquet",
]


def _targets(root):
    return {"new": "out.csv", "absolute": str(root / "abs.csv")}


def _payloads(root):
    names = _targets(root)
    out = [w.format(new=names["new"]) for w in WRITERS]
    out += [w.format(new=names["absolute"]) for w in WRITERS if "{new}" in w][:4]
    return out


def _assert_nothing_written(root, cwd):
    assert sorted(p.name for p in root.iterdir()) == ["data.csv", "notes.txt"]
    assert (root / "data.csv").read_text() == ORIGINAL
    assert list(cwd.iterdir()) == []


def _session_dir(tmp_path):
    root = tmp_path / "work"
    root.mkdir()
    (root / "data.csv").write_text(ORIGINAL)
    (root / "notes.txt").write_text("kept\n")
    cwd = tmp_path / "elsewhere"  # the process runs somewhere else than the session
    cwd.mkdir()
    return root, cwd


def _errors_say_why(calls):
    for call in calls:
        assert call.state == "error", (call.input, call.output)
        assert "read-only SELECT" in call.error or "configuration" in call.error, call.error


@pytest.mark.parametrize("agent", ["build", "plan"])
def test_no_payload_writes_a_file_under_either_agent(make_forge, server, tmp_path,
                                                     monkeypatch, agent):
    root, cwd = _session_dir(tmp_path)
    monkeypatch.chdir(cwd)
    payloads = _payloads(root)
    server.add(Turn([tool_call("sql", {"query": q}) for q in payloads]), Turn.text("tried"))
    forge = make_forge(builtin_tools=True, root=root,
                       namespace={"frame": pd.DataFrame({"a": [1]})})
    forge.session("s").prompt("write files through SQL", agent=agent)
    calls = forge.session("s").messages()[1].tool_parts
    assert [c.input["query"] for c in calls] == payloads
    _errors_say_why(calls)
    _assert_nothing_written(root, cwd)
    explain = calls[0].error
    assert "EXPLAIN statement" in explain and "EXPLAIN ANALYZE runs the statement" in explain
    assert "COPY (inside a WITH clause)" in calls[5].error
    assert "query() runs SQL text that is not checked" in calls[10].error


def test_no_payload_writes_a_file_from_a_task_subagent(make_forge, server, tmp_path,
                                                       monkeypatch):
    root, cwd = _session_dir(tmp_path)
    monkeypatch.chdir(cwd)
    payloads = _payloads(root)
    server.add(Turn([tool_call("task", {"description": "export", "prompt": "Export it."})]),
               Turn([tool_call("sql", {"query": q}) for q in payloads]),  # the subagent
               Turn.text("could not"),  # the subagent's answer
               Turn.text("The subagent could not write."))
    forge = make_forge(builtin_tools=True, root=root)
    parent = forge.session("s")
    assert parent.prompt("delegate").status == "completed"
    [subtask] = [p for p in parent.messages()[1].parts if p.type == "subtask"]
    calls = forge.session(subtask.child_session_id).messages()[1].tool_parts
    assert [c.input["query"] for c in calls] == payloads
    _errors_say_why(calls)
    _assert_nothing_written(root, cwd)


def test_relative_paths_resolve_against_the_session_directory(make_forge, server, tmp_path,
                                                              monkeypatch):
    root, cwd = _session_dir(tmp_path)
    (cwd / "data.csv").write_text("a,b\n100,200\n")  # what the cwd would have given
    (root / "parts").mkdir()
    for i in range(3):
        (root / "parts" / f"p{i}.csv").write_text(f"a,b\n{i},{i}\n")
    monkeypatch.chdir(cwd)
    queries = [
        "SELECT sum(a) AS total FROM read_csv('data.csv')",
        "SELECT sum(a) AS total FROM 'data.csv'",
        "SELECT sum(a) AS total FROM read_csv('./parts/../data.csv')",
        "SELECT count(*) AS files FROM read_csv('parts/*.csv')",
        "SELECT count(*) AS lines FROM read_csv(['data.csv', 'parts/p0.csv'])",
        "SELECT content FROM read_text('notes.txt')",
        f"SELECT sum(a) AS total FROM read_csv('{root / 'data.csv'}')",
    ]
    server.add(Turn([tool_call("sql", {"query": q}) for q in queries]), Turn.text("read"))
    forge = make_forge(builtin_tools=True, root=root)
    forge.session("s").prompt("read the files")
    plain, bare, dotted, wildcard, listed, text, absolute = forge.session("s").messages()[1].tool_parts
    for call in (plain, bare, dotted, absolute):
        assert call.state == "completed" and "4" in call.output and "100" not in call.output
    assert wildcard.state == "completed" and "3" in wildcard.output
    assert listed.state == "completed" and "3" in listed.output
    assert text.state == "completed" and "kept" in text.output
    _assert_nothing_written_but(root, {"data.csv", "notes.txt", "parts"})


def _assert_nothing_written_but(root, names):
    assert {p.name for p in root.iterdir()} == names


def test_paths_out_of_the_session_directory_are_refused(make_forge, server, tmp_path,
                                                        monkeypatch):
    root, cwd = _session_dir(tmp_path)
    outside = tmp_path / "private.csv"
    outside.write_text("secret,value\nhunter2,1\n")
    os.symlink(outside, root / "link.csv")
    os.symlink(tmp_path, root / "up")
    monkeypatch.chdir(root)  # even with the cwd inside the root
    queries = [
        "SELECT * FROM read_csv('../private.csv')",
        f"SELECT * FROM read_csv('{outside}')",
        "SELECT * FROM read_csv('link.csv')",
        "SELECT * FROM read_csv('up/private.csv')",
        "SELECT * FROM 'up/private.csv'",
        "SELECT * FROM read_csv('*.csv')",  # the wildcard skips the link: data.csv alone
        "SELECT * FROM read_text('/etc/hostname')",
        "SELECT * FROM read_text('../' || 'private.csv')",  # not a literal: DuckDB refuses
        "SELECT * FROM glob('../*')",
        "SELECT * FROM read_text('https://example.com/x.csv')",
    ]
    server.add(Turn([tool_call("sql", {"query": q}) for q in queries]), Turn.text("no"))
    forge = make_forge(builtin_tools=True, root=root)
    forge.session("s").prompt("read outside")
    calls = forge.session("s").messages()[1].tool_parts
    for call in calls:
        assert call.state == ("completed" if call is calls[5] else "error"), call.input
        assert "hunter2" not in (call.error or "") and "hunter2" not in (call.output or "")
    assert "outside the root" in calls[0].error and "symbolic link" in calls[2].error
    assert "(2 rows)" in calls[5].output  # data.csv's
    assert "reads only the files named as 'quoted' paths" in calls[7].error
    assert "URL" in calls[9].error


def test_dataframes_still_answer_and_the_count_is_of_the_whole_result(make_forge, server,
                                                                      tmp_path):
    df = pd.DataFrame({"x": range(250), "g": ["a", "b"] * 125})
    queries = ["SELECT g, count(*) AS n FROM df GROUP BY g ORDER BY g",
               "FROM df WHERE x >= 100 -- a trailing comment",
               "WITH t AS (SELECT * FROM df) SELECT max(x) AS top FROM t",
               "SUMMARIZE df", "DESCRIBE df"]
    server.add(Turn([tool_call("sql", {"query": q}) for q in queries]), Turn.text("done"))
    forge = make_forge(builtin_tools=True, root=tmp_path, namespace={"df": df})
    forge.session("s").prompt("query")
    grouped, page, top, summary, described = forge.session("s").messages()[1].tool_parts
    assert grouped.state == "completed" and "125" in grouped.output
    assert "150 rows; showing the first 100" in page.output
    assert "249" in top.output
    assert summary.state == described.state == "completed" and "BIGINT" in described.output


def test_below_the_check_the_connection_cannot_overwrite_what_it_reads(tmp_path):
    """Were a writing statement ever to pass the check: DuckDB may open only the files the
    query reads, and (on Linux) the thread it runs in may write no file at all."""
    import asyncio

    import duckdb

    from forge_jupyter.store.query.sandbox import locked_connection
    from forge_jupyter.tools.confined import abi_version, confined

    victim = tmp_path / "data.csv"
    victim.write_text(ORIGINAL)

    def attempt() -> list[str]:
        con = locked_connection([str(victim)])
        outcomes = []
        for statement in (f"COPY (SELECT 42 AS a) TO '{victim}' (USE_TMP_FILE false)",
                          f"COPY (SELECT 42 AS a) TO '{tmp_path / 'new.csv'}'",
                          f"ATTACH '{tmp_path / 'new.duckdb'}' AS n",
                          "SET enable_external_access = true"):
            try:
                con.execute(statement)
                outcomes.append("ran")
            except duckdb.Error as exc:
                outcomes.append(type(exc).__name__)
        outcomes.append(str(con.sql(f"SELECT sum(a) FROM read_csv('{victim}')").fetchall()))
        con.close()
        return outcomes

    outcomes, forbidden = asyncio.run(confined(attempt))
    assert forbidden == (abi_version() >= 1)
    if forbidden:
        assert outcomes[0] == "IOException"  # the OS said no
        assert victim.read_text() == ORIGINAL
    assert outcomes[1:] == ["PermissionException", "PermissionException",
                            "InvalidInputException", "[(4,)]"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.csv"]
    (tmp_path / "after.txt").write_text("the caller's thread still writes")


def test_a_completed_call_records_whether_the_os_forbade_writes(make_forge, server, tmp_path):
    from forge_jupyter.tools.confined import abi_version

    server.add(Turn([tool_call("sql", {"query": "SELECT 41 + 1 AS answer"})]), Turn.text("42"))
    forge = make_forge(builtin_tools=True, root=tmp_path)
    forge.session("s").prompt("add")
    [call] = forge.session("s").messages()[1].tool_parts
    assert call.state == "completed" and "42" in call.output
    assert call.metadata["writes_forbidden_by_os"] is (abi_version() >= 1)
