"""Restart & Run All replays recorded %%forge turns: no model request, the namespace rebuilt
by the recorded python calls run again (nbclient, a real kernel, the fake model server)."""

from __future__ import annotations

import duckdb
import nbformat
import pytest

from forge_jupyter.testing import Turn, text, tool_call
from tests.notebook.nb_kernel import prompt_sent
from tests.notebook.replay_nb import notebook, run, shown

# A kernel (nbclient, twice for a replay) per test, on purpose: out of the inner loop.
pytestmark = pytest.mark.slow


def test_second_run_replays_text_and_python_calls_without_a_model_request(tmp_path, fake_model_server):
    server = fake_model_server
    nb = notebook("%%forge\nMake a variable x.",
                  "print('x =', x)",
                  "%%forge\nSay hi.")
    server.add([text("Making it."), tool_call("python", {"code": "x = 41 + 1\nx"})],
               Turn.text("x is 42."), Turn.text("Hi there."))
    first = run(nb, tmp_path, server.openai_base)
    assert len(server.requests) == 3
    assert "x = 42" in shown(first.cells[2])

    second = run(nb, tmp_path, server.openai_base)
    assert len(server.requests) == 3  # not one more
    assert "x = 42" in shown(second.cells[2])  # the python call ran again in the new kernel
    replayed = shown(second.cells[1])
    assert "Replayed" in replayed and "openai/gpt-4o-mini" in replayed, replayed
    assert "x is 42." in replayed and "Hi there." in shown(second.cells[3])
    [value] = [o for o in second.cells[1].outputs if o.output_type == "execute_result"]
    assert "↻ replayed · recorded" in value.data["text/html"]  # the cell value says so too
    with duckdb.connect(str(tmp_path / "forge.duckdb"), read_only=True) as con:
        rows = con.execute("SELECT role, replay_of IS NOT NULL, cost FROM message "
                           "ORDER BY created_at").fetchall()
    replays = [r for r in rows if r[1]]
    assert len(replays) == 5 and all(r[2] == 0 for r in replays)  # 2 prompts, 3 answers


def test_parallel_python_calls_are_run_again_in_their_recorded_order(tmp_path, fake_model_server):
    server = fake_model_server
    nb = notebook("%%forge\nBuild a and b.", "print(a, b, order)")
    server.add([tool_call("python", {"code": "order = ['a']\na = 1"}),
                tool_call("python", {"code": "order.append('b')\nb = a + 1\nb"})],
               Turn.text("a and b are ready."))
    first = run(nb, tmp_path, server.openai_base)
    assert shown(first.cells[2]).strip() == "1 2 ['a', 'b']"
    second = run(nb, tmp_path, server.openai_base)
    assert len(server.requests) == 2
    assert shown(second.cells[2]).strip() == "1 2 ['a', 'b']"
    assert shown(second.cells[1]).count("python completed") == 2


def test_a_changed_prompt_asks_the_model_and_so_do_the_cells_after_it(tmp_path, fake_model_server):
    server = fake_model_server
    nb = notebook("%%forge\nSay hi.", "%%forge\nSay bye.")
    server.add(Turn.text("Hi."), Turn.text("Bye."))
    run(nb, tmp_path, server.openai_base)
    nb.cells[1].source = "%%forge\nSay hello."
    server.add(Turn.text("Hello."), Turn.text("Bye again."))
    second = run(nb, tmp_path, server.openai_base)
    # the second cell's prompt is unchanged, but what comes before it is not: live too
    assert len(server.requests) == 4
    assert [prompt_sent(r) for r in server.requests[2:]] == ["Say hello.", "Say bye."]
    assert "Replayed" not in shown(second.cells[1]) + shown(second.cells[2])
    assert any("Hello." in str(m.get("content")) for m in server.requests[3].messages)


DATA_CELL = "%%forge\nHow big is data.csv?"
READ = {"code": "import pandas as pd\ndf = pd.read_csv('data.csv')\ndf.shape"}


def _record_data_turn(tmp_path, server) -> None:
    (tmp_path / "data.csv").write_text("a,b\n1,2\n3,4\n5,6\n")
    server.add([tool_call("python", READ)], Turn.text("It has 3 rows."))
    first = run(notebook(DATA_CELL, "print(df.shape)"), tmp_path, server.openai_base)
    assert "(3, 2)" in shown(first.cells[2])
    (tmp_path / "data.csv").write_text("a,b\n1,2\n3,4\n5,6\n7,8\n")


def test_strict_replay_ends_the_cell_naming_it_and_the_difference(tmp_path, fake_model_server):
    server = fake_model_server
    _record_data_turn(tmp_path, server)
    nb = notebook(DATA_CELL, "print(df.shape)")
    out = run(nb, tmp_path, server.openai_base, env={"FORGE_REPLAY": "strict"}, allow_errors=True)
    assert len(server.requests) == 2  # no model call
    said = shown(out.cells[1])
    assert "Replay of cell “How big is data.csv?” stopped: python call 1" in said, said
    assert "recorded '(3, 2)', now '(4, 2)'" in said
    assert "%%forge --live" in said
    # in the error output's name and value, where a CI log reads it (not a line on stderr)
    [error] = [o for o in out.cells[1].outputs if o.output_type == "error"]
    assert error.ename == "ForgeReplayError" and "recorded '(3, 2)', now '(4, 2)'" in error.evalue


def test_papermill_says_why_a_strict_replay_failed(tmp_path, fake_model_server, monkeypatch):
    """Before, papermill said only 'Exception encountered at "In [2]":' — the reason was a
    UsageError line on stderr, which the exception it raises does not carry."""
    papermill = pytest.importorskip("papermill")
    server = fake_model_server
    _record_data_turn(tmp_path, server)
    for key, value in {"FORGE_MODEL": "openai/gpt-4o-mini", "FORGE_DB": str(tmp_path / "forge.duckdb"),
                       "FORGE_WIDGET": "off", "FORGE_API_KEY": "sk-fake", "FORGE_REPLAY": "strict",
                       "JPY_SESSION_NAME": "analysis.ipynb", "FORGE_API_BASE": server.openai_base,
                       "FORGE_PERMISSIONS": "python:*=allow"}.items():
        monkeypatch.setenv(key, value)
    source = tmp_path / "ci.ipynb"
    nbformat.write(notebook(DATA_CELL, "print(df.shape)"), source)
    with pytest.raises(papermill.PapermillExecutionError) as raised:
        papermill.execute_notebook(str(source), str(tmp_path / "ci-out.ipynb"), kernel_name="python3",
                                   cwd=str(tmp_path), progress_bar=False)
    said = str(raised.value)
    assert raised.value.ename == "ForgeReplayError", said
    assert "python call 1" in said and "recorded '(3, 2)', now '(4, 2)'" in said, said
    assert len(server.requests) == 2  # no model call


def test_auto_replay_hands_a_different_result_to_the_model(tmp_path, fake_model_server):
    server = fake_model_server
    _record_data_turn(tmp_path, server)
    server.add(Turn.text("Now it has 4 rows."))
    out = run(notebook(DATA_CELL, "print(df.shape)"), tmp_path, server.openai_base)
    assert len(server.requests) == 3  # the model answered once, from the difference on
    tool_result = server.requests[2].messages[-1]
    assert tool_result["role"] == "tool" and "(4, 2)" in tool_result["content"]
    said = shown(out.cells[1])
    assert "Replay stopped" in said and "Now it has 4 rows." in said
    assert "(4, 2)" in shown(out.cells[2])


def test_live_flag_asks_the_model_and_replay_flag_fails_without_a_recording(tmp_path, fake_model_server):
    server = fake_model_server
    missing = run(notebook("%%forge --replay\nSay hi."), tmp_path, server.openai_base,
                  allow_errors=True)
    assert len(server.requests) == 0
    assert "no recorded turn of cell “Say hi.” matches" in shown(missing.cells[1])
    server.add(Turn.text("Hi."), Turn.text("Hi again."))
    run(notebook("%%forge\nSay hi."), tmp_path, server.openai_base)
    replayed = run(notebook("%%forge --replay\nSay hi."), tmp_path, server.openai_base)
    assert len(server.requests) == 1 and "Replayed" in shown(replayed.cells[1])
    live = run(notebook("%%forge --live\nSay hi."), tmp_path, server.openai_base)
    assert len(server.requests) == 2 and "Hi again." in shown(live.cells[1])


def test_a_deleted_recording_is_asked_again(tmp_path, fake_model_server, make_forge):
    server = fake_model_server
    nb = notebook("%%forge\nSay hi.")
    server.add(Turn.text("Hi."), Turn.text("Hi, live."))
    run(nb, tmp_path, server.openai_base)
    forge = make_forge(db=str(tmp_path / "forge.duckdb"))
    for sid in forge.sessions()["session_id"]:
        forge.delete_session(sid)
    forge.close()
    out = run(nb, tmp_path, server.openai_base)
    assert len(server.requests) == 2 and "Hi, live." in shown(out.cells[1])


def test_two_notebooks_with_the_same_cells_do_not_replay_each_other(tmp_path, fake_model_server):
    server = fake_model_server
    nb = notebook("%%forge\nSay hi.")  # one notebook, saved under two names: same cell ids
    server.add(Turn.text("Hi from a."), Turn.text("Hi from b."))
    run(nb, tmp_path, server.openai_base, name="a.ipynb")
    b = run(nb, tmp_path, server.openai_base, name="b.ipynb")
    assert len(server.requests) == 2 and "Hi from b." in shown(b.cells[1])
    a = run(nb, tmp_path, server.openai_base, name="a.ipynb")
    assert len(server.requests) == 2 and "Hi from a." in shown(a.cells[1])


def test_forks_and_compaction_after_the_recording_do_not_stop_the_replay(tmp_path, fake_model_server, make_forge):
    server = fake_model_server
    nb = notebook("%%forge\nSet y.", "%forge fork", "%%forge\nSay y.", "print(y)")
    server.add([tool_call("python", {"code": "y = 7"})], Turn.text("y is set."),
               Turn.text("y is 7."))
    run(nb, tmp_path, server.openai_base)
    forge = make_forge(db=str(tmp_path / "forge.duckdb"))
    sessions = forge.sessions()
    server.add(Turn.text("Summary: y was set to 7."))
    for sid in sessions["session_id"]:  # compact the original and the notebook's fork
        forge.session(sid).compact()
    forge.session(sessions["session_id"].iloc[0]).fork()
    forge.close()
    requests = len(server.requests)
    out = run(nb, tmp_path, server.openai_base)
    assert len(server.requests) == requests
    assert "Replayed" in shown(out.cells[3]) and shown(out.cells[4]).strip() == "7"


HANDLER = """import forge_jupyter
asked = []
def answer(request):
    asked.append(request.tool)
    return {answer!r}
forge_jupyter.current().on_approval(answer)"""
TWO_STEPS = "%%forge\nBuild b in two steps."


def _two_step_turns(server) -> None:
    server.add([tool_call("python", {"code": "a = 1"})],
               [tool_call("python", {"code": "b = a + 1\nb"})], Turn.text("b is 2."))


def _approved_then_replayed(tmp_path, server, answer: str) -> tuple[str, str]:
    """The two-step python cell run live then replayed, the notebook's handler answering
    ``answer``: what each run's last cell printed (the questions asked, then ``b``)."""
    nb = notebook(HANDLER.format(answer=answer), TWO_STEPS, "print(asked, b)")
    _two_step_turns(server)
    first = run(nb, tmp_path, server.openai_base, env={"FORGE_PERMISSIONS": ""})
    second = run(nb, tmp_path, server.openai_base, env={"FORGE_PERMISSIONS": ""})
    assert len(server.requests) == 3  # the replay asked the model nothing
    return shown(first.cells[3]).strip(), shown(second.cells[3]).strip()


def test_a_replay_asks_once_for_the_whole_cell_when_the_original_was_approved_once(tmp_path, fake_model_server):
    first, second = _approved_then_replayed(tmp_path, fake_model_server, "once")
    assert first == "['python', 'python'] 2"
    assert second == "['python'] 2"  # one question, both calls ran


def test_a_replay_does_not_ask_when_the_original_was_approved_for_the_session(tmp_path, fake_model_server, make_forge):
    first, second = _approved_then_replayed(tmp_path, fake_model_server, "session")
    assert first == "['python'] 2"
    assert second == "[] 2"
    forge = make_forge(db=str(tmp_path / "forge.duckdb"))
    try:
        answers = forge.events(type="permission.answered")
    finally:
        forge.close()
    replayed = answers[answers["actor"] == "forge"]
    assert len(replayed) == 1 and "approved for the session when recorded" in replayed["data"].iloc[0]


def test_a_denied_replay_fails_the_cell_and_runs_nothing(tmp_path, fake_model_server):
    server = fake_model_server
    _two_step_turns(server)
    run(notebook(HANDLER.format(answer="once"), TWO_STEPS), tmp_path, server.openai_base,
        env={"FORGE_PERMISSIONS": ""})
    nb = notebook(HANDLER.format(answer="deny"), TWO_STEPS, "print(asked, 'a' in dir())")
    out = run(nb, tmp_path, server.openai_base, env={"FORGE_PERMISSIONS": ""}, allow_errors=True)
    assert len(server.requests) == 3
    assert "was not approved" in shown(out.cells[2]) and "%%forge --live" in shown(out.cells[2])
    assert shown(out.cells[3]).strip() == "['python'] False"


def test_the_plan_agent_never_runs_a_recorded_python_call_again(tmp_path, fake_model_server):
    server = fake_model_server
    nb = notebook("%%forge -a plan\nSet z.", "print('z' in dir())")
    server.add([tool_call("python", {"code": "z = 5"})], Turn.text("z is set."))
    first = run(nb, tmp_path, server.openai_base)  # a rule allowed python when recorded
    assert shown(first.cells[2]).strip() == "True"
    second = run(nb, tmp_path, server.openai_base, env={"FORGE_PERMISSIONS": ""})
    assert len(server.requests) == 2
    assert "Replayed" in shown(second.cells[1]) and shown(second.cells[2]).strip() == "False"
