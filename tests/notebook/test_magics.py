"""%%forge and %forge through a real kernel (jupyter_client), against the fake model server."""

from __future__ import annotations

import re

import pytest

from forge_jupyter.testing import Turn, tool_call
from tests.notebook.nb_kernel import forge_kernel, person_text, prompt_sent, usage_error


@pytest.fixture(scope="module")
def kernel(model_server, tmp_path_factory):
    k = forge_kernel(model_server.openai_base, tmp_path_factory.mktemp("nb"))
    yield k
    k.close()


def test_a_forge_cell_is_complete_only_after_a_blank_line_like_any_cell_magic(kernel):
    # What a console frontend asks before it runs what was typed (is_complete_request).
    def complete(code: str) -> str:
        return kernel.reply(kernel.kc.is_complete(code))["content"]["status"]

    assert complete("%%forge\n") == complete("%%timeit\n") == "incomplete"
    assert complete("%%forge\nSay hello\n") == "incomplete"
    assert complete("%%forge\nSay hello\n\n") == complete("%%timeit\nx = 1\n\n") == "complete"


def test_a_forge_cell_answers_and_its_value_is_the_message(kernel, server):
    server.add(Turn.text("Hello from the model."))
    r = kernel.run("%%forge\nSay hello")
    assert r.status == "ok", r.error
    assert "Hello from the model." in r.stdout  # streamed as text (no widget frontend)
    [value] = r.results
    assert "Hello from the model." in value["text/html"]
    check = kernel.run("print(type(_).__name__, _.status, _.text)")
    assert check.stdout.strip() == "Message completed Hello from the model."
    assert prompt_sent(server.requests[-1]) == "Say hello"


def test_variables_are_interpolated_and_double_braces_escape(kernel, server):
    server.add(Turn.text("ok"))
    kernel.run("city = 'Lima'")
    r = kernel.run("%%forge\nWeather in {city}? Format as {{json}}.")
    assert r.status == "ok", r.error
    assert prompt_sent(server.requests[-1]) == "Weather in Lima? Format as {json}."


def test_an_unknown_variable_is_a_usage_message_not_a_traceback(kernel, server):
    before = len(server.requests)
    r = kernel.run("%%forge\nTell me about {nope}")
    assert r.status == "error"
    assert usage_error(r) and "no variable 'nope'" in r.stderr
    assert "Traceback" not in r.stderr
    assert len(server.requests) == before


def test_bad_options_give_a_usage_message(kernel, server):
    r = kernel.run("%%forge --frobnicate\nhi")
    assert r.status == "error" and usage_error(r)
    assert "usage: %%forge" in r.stderr
    r = kernel.run("%%forge --tools python=maybe\nhi")
    assert usage_error(r) and "name=true|false" in r.stderr


def test_an_unknown_session_is_a_clear_error_listing_the_sessions(kernel, server):
    kernel.run("%forge new alpha")
    r = kernel.run("%%forge -s nosuchsession\nhi")
    assert r.status == "error" and usage_error(r)
    assert "no session named or numbered 'nosuchsession'" in r.stderr
    assert "alpha" in r.stderr


def test_session_options_new_and_use(kernel, server):
    server.add(Turn.text("one"), Turn.text("two"), Turn.text("three"))
    n = len(server.requests)
    assert kernel.run("%%forge --new -s project-x\nfirst").status == "ok"
    assert kernel.run("%%forge\nsecond").status == "ok"  # the current session: project-x
    first, second = server.requests[n].messages, server.requests[n + 1].messages
    assert [person_text(m["content"]) for m in second if m["role"] == "user"] == ["first", "second"]
    kernel.run("%forge new other")
    assert kernel.run("%%forge\nfresh").status == "ok"
    assert [person_text(m["content"]) for m in server.requests[n + 2].messages if m["role"] == "user"] == ["fresh"]
    assert len(first) < len(second)
    r = kernel.run("%forge use project-x")
    assert "project-x" in r.stdout


def test_model_agent_tools_and_budget_options(kernel, server):
    server.add(Turn.text("planned"))
    r = kernel.run("%%forge -m openai/gpt-4o -a plan --tools python=false,sql=true --budget 1.5\nplan")
    assert r.status == "ok", r.error
    req = server.requests[-1]
    assert req.model == "gpt-4o"
    assert "python" not in req.tools and "write" not in req.tools and "sql" in req.tools
    origin = kernel.run("m = _.parent_id; import forge_jupyter as fj; "
                        "print(fj.current().store.get_message(m).metadata)")
    assert "1.5" in origin.stdout


def test_the_user_message_records_where_it_came_from(kernel, server):
    server.add(Turn.text("traced"))
    kernel.run("%%forge\ntrace me")
    r = kernel.run("import forge_jupyter as fj; print(fj.current().store.get_message(_.parent_id).origin)")
    assert "'execution_count':" in r.stdout and "'notebook':" in r.stdout


def test_async_option_returns_at_once_and_the_run_continues(kernel, server):
    server.add(Turn.text("background answer", chunk=2, chunk_delay=0.02))
    r = kernel.run("%%forge --async\nrun in the background")
    assert r.status == "ok" and r.results == []
    # Wait for the background run itself (a busy machine can take seconds), then read it back.
    done = kernel.run("import asyncio, forge_jupyter as fj\n"
                      "ctl = get_ipython()._forge_magics.controller\n"
                      "await asyncio.wait_for(asyncio.gather(*ctl.background.values()), 120)\n"
                      "print(fj.current().session(ctl.current_session_id).messages()[-1].text)")
    assert "background answer" in done.stdout


def test_tool_calls_run_in_the_kernel_namespace(kernel, server):
    server.add(Turn([tool_call("variables", {"name": "df"})]), Turn.text("It has 3 rows."))
    kernel.run("import pandas as pd; df = pd.DataFrame({'a': [1, 2, 3]})")
    r = kernel.run("%%forge\nHow many rows has df?")
    assert r.status == "ok", r.error
    tool_result = [m for m in server.requests[-1].messages if m["role"] == "tool"][0]["content"]
    assert "3 rows × 1 columns" in tool_result


def test_line_magic_subcommands_return_dataframes(kernel, server):
    server.add(Turn.text("for the frames"))
    kernel.run("%%forge\nsomething to count")
    for command in ("sessions", "history", "history --all", "cost", "cost --by day",
                    "cost --by model", "config", "sql SELECT count(*) AS n FROM messages"):
        r = kernel.run(f"_r = %forge {command}\nimport pandas\nprint(isinstance(_r, pandas.DataFrame))")
        assert r.status == "ok", (command, r.error)
        assert r.stdout.strip() == "True", command
    cfg = kernel.run("_c = %forge config\nprint(_c.to_string())")
    assert "env FORGE_MODEL" in cfg.stdout and "openai/gpt-4o-mini" in cfg.stdout


def test_config_magic_changes_the_model_and_shows_its_source(kernel, server):
    server.add(Turn.text("configured"))
    kernel.run("%config Forge.model = 'openai/gpt-4.1-mini'")
    kernel.run("%%forge\nwhich model?")
    assert server.requests[-1].model == "gpt-4.1-mini"
    r = kernel.run("_c = %forge config\nprint(_c.to_string())")
    assert "gpt-4.1-mini" in r.stdout and "config" in r.stdout
    kernel.run("%config Forge.model = 'openai/gpt-4o-mini'")


def test_config_changes_apply_to_the_next_prompt_without_a_new_store(kernel, server):
    kernel.run("%config Forge.stream_timeout = 7.5\n%config Forge.max_tokens = 321")
    r = kernel.run("import forge_jupyter\n_f = forge_jupyter.current()\n"
                   "print(_f.stream_timeout, _f.max_tokens)")
    assert r.stdout.split() == ["7.5", "321"], r.text
    kernel.run("%config Forge.stream_timeout = 120.0\n%config Forge.max_tokens = 0")


def test_fork_compact_stop_and_help(kernel, server):
    server.add(Turn.text("base answer"), Turn.text("## Goal\nsummary"), Turn.text("after fork"))
    kernel.run("%forge new forkme")
    kernel.run("%%forge\nbase question")
    r = kernel.run("%forge fork")
    assert "Forked “base question (fork)” into session ses_…" in r.stdout
    r = kernel.run("%forge compact")
    assert "Compacted session" in r.stdout, r.error
    assert kernel.run("%forge stop").stdout.strip() == "Nothing is running."
    assert "%forge sessions" in kernel.run("%forge help").stdout
    r = kernel.run("%forge frobnicate")
    assert usage_error(r) and "unknown %forge command" in r.stderr


def test_sessions_and_history_show_titles_models_and_short_ids_that_work(kernel, server):
    server.add(Turn.text("Three gaps. " + "More words follow here. " * 12), Turn.text("forked"))
    kernel.run("%forge new")
    r = kernel.run("%%forge\n\n  Which   columns have gaps?\nA second line of detail.")
    assert r.status == "ok", r.error
    sid = kernel.run("print(get_ipython()._forge_magics.controller.current_session_id)").stdout.strip()
    shown = kernel.run("%forge sessions")
    [table] = shown.results
    row = next(line for line in table["text/html"].split("<tr>") if f"…{sid[-6:]}" in line)
    assert "Which columns have gaps?" in row and "openai/gpt-4o-mini" in row
    assert "NaN" not in table["text/html"] and sid not in table["text/html"]
    assert "NaN" not in table["text/plain"] and f"ses_…{sid[-6:]}" in table["text/plain"]
    full = kernel.run("_s = %forge sessions\nprint(_s.session_id.tolist()[-1], _s.title.tolist()[-1])")
    assert full.stdout.strip() == f"{sid} Which columns have gaps?"

    [history] = kernel.run("%forge history").results
    head = history["text/html"].split("</thead>")[0]
    for column in ("pos", "message_id", "role", "text", "tokens_input", "cost"):
        assert f"<th>{column}</th>" in head, column
    for hidden in ("written_by", "parent_id", "agent", "finish", "completed_at", "tool_calls"):
        assert f"<th>{hidden}</th>" not in head, hidden
    assert "Which columns have gaps? A second line of detail.</td>" in history["text/html"]
    cut = re.search(r"<td>(Three gaps\. More words[^<]*…)</td>", history["text/html"])
    assert cut and len(cut[1]) <= 60  # the long answer is cut, on one line

    kernel.run("%forge new elsewhere")
    used = kernel.run(f"%forge use ses_…{sid[-6:]}")
    assert used.status == "ok" and sid in used.stdout, used.stderr
    first = kernel.run("_h = %forge history\nprint(_h.message_id[0])").stdout.strip()
    forked = kernel.run(f"%forge fork msg_…{first[-6:]}")
    assert forked.status == "ok" and f"at msg_…{first[-6:]})" in forked.stdout, forked.stderr
    nope = kernel.run("%forge use ses_…zzzzzz")
    assert usage_error(nope) and "no session named or numbered 'ses_…zzzzzz'" in nope.stderr


def test_fork_and_compact_say_short_ids_and_a_fork_is_titled_as_one(kernel, server):
    """Before: 30-character ids that wrapped, and a fork titled exactly as its parent."""
    server.add(Turn.text("base answer"), Turn.text("## Goal\nsummary"))
    kernel.run("%forge new titled")
    assert kernel.run("%%forge\nCount the rows of sales").status == "ok"
    r = kernel.run("%forge fork")
    said = r.stdout.strip()
    assert said.startswith("Forked “Count the rows of sales (fork)” into session ses_…"), said
    assert len(said) <= 120 and not re.search(r"_[0-9A-Za-z]{26}\b", said), said
    short_id = re.search(r"into session (ses_…\w{6})", said)[1]
    titles = kernel.run("_s = %forge sessions\nprint(_s.title.tolist()[-2:])").stdout.strip()
    assert titles == "['Count the rows of sales', 'Count the rows of sales (fork)']", titles
    compacted = kernel.run("%forge compact").stdout.strip()
    assert re.fullmatch(r"Compacted session ses_…\w{6}: summary msg_…\w{6} \(.*\)\.", compacted), compacted
    assert "Using session" in kernel.run(f"%forge use {short_id}").stdout  # as printed, it works


def test_a_mistyped_option_or_command_says_which_was_meant(kernel, server):
    before = len(server.requests)
    r = kernel.run("%%forge --modle openai/gpt-4o\nhello")
    assert usage_error(r) and "unrecognized arguments: --modle" in r.stderr, r.stderr
    assert "did you mean `--model`?" in r.stderr
    r = kernel.run("%%forge --sesion main\nhello")
    assert usage_error(r) and "did you mean `--session`?" in r.stderr, r.stderr
    r = kernel.run("%forge histroy")
    assert usage_error(r) and "did you mean `history`?" in r.stderr, r.stderr
    assert len(server.requests) == before  # none of them ran a turn
