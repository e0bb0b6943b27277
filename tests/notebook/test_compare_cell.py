"""``%%forge --compare`` in a real kernel (nbclient): each model in its own fork, the notebook's
session untouched, the frame as the cell's value, a fork taken up with ``.use``, and Run All
replaying every column asking no model. The fake model server answers by the model named."""

from __future__ import annotations

import pytest

from forge_jupyter.testing import Turn
from tests.notebook.replay_nb import notebook, run, shown

pytestmark = pytest.mark.slow

COMPARE = ("%%forge --compare openai/model-a,openai/model-b,openai/broken\n"
           "What is the mean of @prices?")


def by_model(request):
    model = request.body.get("model", "")
    said = str(request.body.get("messages"))
    if model == "broken":
        return Turn.error(400, "fake provider: model 'broken' does not exist")
    if "And the median?" in said:
        return Turn.text("median answered in the notebook's session")
    if "Go on." in said:
        return Turn.text("going on in model-a's fork" if "model-a says" in said else "lost")
    if "What is the mean" in said:
        return Turn.text(f"{model} says the mean is 4.2")
    return Turn.text("Loaded.")


def html(cell) -> str:
    return "".join(o.get("data", {}).get("text/html", "") for o in cell.outputs)


def test_compare_cell_runs_each_model_in_a_fork_and_run_all_replays_every_column(
        tmp_path, fake_model_server):
    server = fake_model_server
    nb = notebook("%%forge\nLoad the data.", "prices = [3.9, 4.2, 4.5]", COMPARE,
                  "frame = _\nprint(frame[['model', 'status', 'steps']].to_string())",
                  "%%forge\nAnd the median?",
                  "fork = frame.use('openai/model-a')",
                  "%%forge\nGo on.")
    server.add(*[by_model] * 12)
    first = run(nb, tmp_path, server.openai_base)
    asked = len(server.requests)
    assert {r.body["model"] for r in server.requests} >= {"model-a", "model-b", "broken"}
    compared = [r for r in server.requests if "What is the mean" in str(r.body["messages"])]
    assert len(compared) >= 3  # every model was sent what @prices points at
    assert all("[3.9, 4.2, 4.5]" in str(r.body["messages"]) for r in compared)
    view = html(first.cells[3])
    assert "openai/model-a says the mean is 4.2" not in view  # the server sees the bare name
    assert "model-a says the mean is 4.2" in view and "model-b says the mean is 4.2" in view
    assert "does not exist" in view and "%forge use ses_" in view
    table = shown(first.cells[4])
    assert "completed" in table and "error" in table
    # the notebook's session went on untouched; the chosen fork holds model-a's answer
    assert "median answered in the notebook's session" in shown(first.cells[5])
    assert "going on in model-a's fork" in shown(first.cells[7])
    median = next(r for r in server.requests if "And the median?" in str(r.body["messages"]))
    assert "says the mean" not in str(median.body["messages"])

    again = run(nb, tmp_path, server.openai_base)  # Restart & Run All
    assert len(server.requests) == asked  # no model asked again, every column replayed
    view = html(again.cells[3])
    assert "model-a says the mean is 4.2" in view and "model-b says the mean is 4.2" in view
    assert view.count("(replayed)") == 3
    assert "going on in model-a's fork" in shown(again.cells[7])  # replayed there too


def test_compare_options_are_checked_in_the_cell(tmp_path, fake_model_server):
    nb = notebook("%%forge --compare openai/a --async\nHi",
                  "%%forge --compare ,\nHi",
                  "%%forge --compare openai/a,openai/b --replay\nHi")
    out = run(nb, tmp_path, fake_model_server.openai_base, allow_errors=True)
    assert "leave out --async" in shown(out.cells[1])
    assert "1 to 8 models" in shown(out.cells[2])
    assert "no recorded comparison" in shown(out.cells[3])
    assert fake_model_server.requests == []
