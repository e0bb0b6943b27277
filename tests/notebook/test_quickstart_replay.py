"""notebooks/quickstart.ipynb run twice, as Restart & Run All would: the second run asks the
model nothing (the fake server's request log says so), rebuilds the same variables — the chart
code's ``totals`` included, with the notebook's approval handler asked once — and its cost
frame shows the replayed steps at $0."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from forge_jupyter import Forge
from forge_jupyter.testing import FakeModelServer
from tests.notebook.replay_nb import run, shown

# A kernel (nbclient, twice for a replay) per test, on purpose: out of the inner loop.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
PROBE = "print(repr(sales.shape), repr(totals.to_dict()), answered, repr(_forge_text))"


def test_the_quickstart_run_twice_replays_every_forge_cell_for_free(tmp_path):
    nb = nbformat.read(ROOT / "notebooks" / "quickstart.ipynb", as_version=4)
    first_forge = next(i for i, c in enumerate(nb.cells) if c.source.startswith("%%forge"))
    nb.cells.insert(first_forge + 1, nbformat.v4.new_code_cell("_forge_text = _.text"))
    nb.cells.append(nbformat.v4.new_code_cell(PROBE))
    # the demo model's rules behind the fake server of this test (its request log is ours)
    env = {"FORGE_MODEL": "openai/gpt-4o-mini", "FORGE_PERMISSIONS": ""}
    with FakeModelServer.demo() as server:
        first = run(nb, tmp_path, server.openai_base, name="quickstart.ipynb", env=env)
        asked = len(server.requests)
        assert asked >= 6  # three prompts, each a tool call or two and an answer
        second = run(nb, tmp_path, server.openai_base, name="quickstart.ipynb", env=env)
        assert len(server.requests) == asked  # not one request more

    assert shown(second.cells[-1]) == shown(first.cells[-1])  # the same variables
    assert "[('python', 'once')]" in shown(second.cells[-1])  # asked once again, for the chart
    forge_cells = [c for c in second.cells if c.source.startswith("%%forge")]
    assert all("Replayed" in shown(c) for c in forge_cells)
    costs_cell = next(c for c in second.cells if 'by=["replayed", "model"]' in c.source)
    assert "True" in shown(costs_cell)

    forge = Forge(db=str(tmp_path / "forge.duckdb"))
    try:
        costs = forge.costs(by="replayed").set_index("replayed")
    finally:
        forge.close()
    assert costs.loc[True, "steps"] >= 6 and costs.loc[True, "cost"] == 0
    assert costs.loc[False, "steps"] == asked
