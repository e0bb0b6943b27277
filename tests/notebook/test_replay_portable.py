"""A notebook's recorded turns travel with it: exported from one store, imported into a
colleague's for the notebook at another path, replayed there with no key and no model server
(strict: a live call would fail the run)."""

from __future__ import annotations

import json

from replay_nb import notebook, run, shown

from forge_jupyter import Forge
from forge_jupyter.testing import Turn, tool_call

NO_MODEL = {"FORGE_MODEL": None, "FORGE_API_KEY": None, "OPENAI_API_KEY": None,
            "ANTHROPIC_API_KEY": None, "FORGE_REPLAY": "strict"}


def test_exported_turns_replay_in_another_store_without_a_key(tmp_path, fake_model_server):
    server = fake_model_server
    mine, theirs = tmp_path / "mine", tmp_path / "theirs"
    mine.mkdir(), theirs.mkdir()
    nb = notebook("%%forge\nSet v.", "%forge fork", "%%forge\nDouble v.", "print(v, w)")
    server.add([tool_call("python", {"code": "v = 21"})], Turn.text("v is 21."),
               [tool_call("python", {"code": "w = v * 2\nw"})], Turn.text("w is 42."))
    first = run(nb, mine, server.openai_base)
    assert shown(first.cells[4]).strip() == "21 42"

    with Forge(db=str(mine / "forge.duckdb")) as forge:
        exported = forge.export_notebook_turns(mine / "analysis.ipynb", tmp_path / "turns.json")
    doc = json.loads(exported.read_text())
    assert doc["notebook"] == "analysis.ipynb" and len(doc["sessions"]) == 2  # and the fork
    assert "sk-fake" not in exported.read_text()  # the key the run used is not in the file

    with Forge(db=str(theirs / "forge.duckdb")) as forge:
        report = forge.import_notebook_turns(exported, theirs / "analysis.ipynb")
        again = forge.import_notebook_turns(exported, theirs / "analysis.ipynb")
    assert len(report.sessions) == 2 and report.messages == 6
    assert again.sessions == [] and len(again.skipped_sessions) == 2  # never twice

    out = run(nb, theirs, None, env=NO_MODEL)
    assert len(server.requests) == 4  # the first run's, nothing since
    assert shown(out.cells[4]).strip() == "21 42"
    assert "Replayed" in shown(out.cells[1]) and "Replayed" in shown(out.cells[3])
