"""Restart & Run All replays recorded %%forge turns: no model request, the namespace rebuilt
by the recorded python calls run again (nbclient, a real kernel, the fake model server)."""

from __future__ import annotations

import duckdb
from replay_nb import notebook, run, shown

from forge_jupyter.testing import Turn, text, tool_call


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
    with duckdb.connect(str(tmp_path / "forge.duckdb"), read_only=True) as con:
        rows = con.execute("SELECT role, replay_of IS NOT NULL, cost FROM message "
                           "ORDER BY created_at").fetchall()
    replays = [r for r in rows if r[1]]
    assert len(replays) == 5 and all(r[2] == 0 for r in replays)  # 2 prompts, 3 answers
