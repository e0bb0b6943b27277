"""A replayed turn keeps its charts for the model (issue 27, item 3): a python call run again
keeps its own images (not the recording's as well), and a result copied from the recording
carries the recorded image into the session's outputs (nbclient, real kernels, DuckDB)."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from forge_jupyter import image_files
from forge_jupyter.testing import Turn, tool_call
from tests.notebook.replay_nb import notebook, run

pytest.importorskip("matplotlib")
pytestmark = pytest.mark.slow

PLOT = "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()"


def _images(db: Path) -> list[tuple[str, str, bool, dict]]:
    """(session, message, replayed?, image facts) of every kept-image file part, in order."""
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute(
            "SELECT p.session_id, p.message_id, m.replay_of IS NOT NULL, p.data::VARCHAR "
            "FROM part p JOIN message m ON m.id = p.message_id WHERE p.type = 'file' "
            "ORDER BY p.id").fetchall()
    return [(s, mid, r, json.loads(d)["image"]) for s, mid, r, d in rows]


def test_a_replayed_chart_is_kept_once_whether_run_again_or_copied(tmp_path, fake_model_server):
    server = fake_model_server
    nb = notebook("%%forge\nPlot it.")
    server.add(Turn([tool_call("python", {"code": PLOT})]), Turn.text("Plotted."))
    run(nb, tmp_path, server.openai_base)
    [(sid, _, replayed, recorded)] = _images(tmp_path / "forge.duckdb")
    assert not replayed
    run(nb, tmp_path, server.openai_base)  # run again: the call keeps its own image
    run(nb, tmp_path, server.openai_base, env={"FORGE_PERMISSIONS": "python:*=deny"})  # copied
    assert len(server.requests) == 2  # both later runs replayed
    images = _images(tmp_path / "forge.duckdb")
    assert len(images) == 3, images  # one per turn: never the recording's as well
    assert len({mid for _, mid, _, _ in images}) == 3 and all(r for _, _, r, _ in images[1:])
    for session, _, _, image in images:
        folder = tmp_path / "outputs" / session
        assert image_files.load(folder, image["sha256"], "image/png") is not None
