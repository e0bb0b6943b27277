"""Run All of a recorded notebook does not load the model client (issue 29, item 6): a replayed
cell asks no model, so the warm-up's litellm import waits for a quiet kernel instead of
competing with the replay on two cores; a cell that needs the model loads it at once.
nbclient, a real kernel (twice), the fake model server."""

from __future__ import annotations

import pytest

from forge_jupyter.testing import Turn
from tests.notebook.replay_nb import notebook, run, shown

pytestmark = pytest.mark.slow

PROBE = "import sys\nprint('litellm loaded:', 'litellm' in sys.modules)"


def test_a_replayed_run_all_leaves_the_model_client_unloaded_and_a_live_cell_loads_it(
        tmp_path, fake_model_server):
    server = fake_model_server
    server.add(Turn.text("Hi there."), Turn.text("Bye now."))
    nb = notebook("%%forge\nSay hi.", PROBE, "%%forge\nSay bye.", PROBE)
    first = run(nb, tmp_path, server.openai_base)
    # live: the first %%forge cell, right after %load_ext, needed the client and loaded it
    assert "Hi there." in shown(first.cells[1]) and "True" in shown(first.cells[2])
    assert len(server.requests) == 2

    second = run(nb, tmp_path, server.openai_base)  # Restart & Run All: every turn replays
    assert len(server.requests) == 2
    assert "Replayed" in shown(second.cells[1]) and "Replayed" in shown(second.cells[3])
    assert shown(second.cells[2]).strip() == "litellm loaded: False"
    assert shown(second.cells[4]).strip() == "litellm loaded: False"
