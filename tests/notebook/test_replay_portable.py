"""A notebook's recorded turns travel with it: exported from one store, imported into a
colleague's for the notebook at another path, replayed there with no key and no model server
(strict: a live call would fail the run)."""

from __future__ import annotations

import json

import pytest

from forge_jupyter import Forge
from forge_jupyter.testing import Turn, tool_call
from tests.notebook.replay_nb import notebook, run, shown

# A kernel (nbclient, twice for a replay) per test, on purpose: out of the inner loop.
pytestmark = pytest.mark.slow

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


def test_an_imported_approval_grants_nothing_here(tmp_path):
    from forge_jupyter.message import Message, TextPart, ToolPart, now
    from forge_jupyter.store.ops import AppendMessage, PutMessage, PutPart

    notebook_path = str(tmp_path / "a.ipynb")
    with Forge(db=str(tmp_path / "a.duckdb")) as forge:
        sid = forge.session("s", new=True).id
        user = Message(session_id=sid, role="user", status="completed", completed_at=now(),
                       origin={"notebook": notebook_path, "cell_id": "c1"})
        user.parts = [TextPart(session_id=sid, message_id=user.id, text="Run it.")]
        answer = Message(session_id=sid, role="assistant", parent_id=user.id,
                         status="completed", finish="stop", completed_at=now())
        call = ToolPart(session_id=sid, message_id=answer.id, call_id="c", tool="python",
                        input={"code": "import os"}).start()
        call.metadata["decision"] = {"answer": "session", "by": "widget"}
        answer.parts = [call.complete("(no output)")]
        forge.store.write([op for m in (user, answer) for op in (
            PutMessage(m), *(PutPart(p) for p in m.parts), AppendMessage(sid, m.id))])
        exported = forge.export_notebook_turns(notebook_path, tmp_path / "turns.json")
    assert '"answer": "session"' in exported.read_text()
    with Forge(db=str(tmp_path / "b.duckdb")) as forge:
        forge.import_notebook_turns(exported, tmp_path / "b.ipynb")
        [part] = [p for m in forge.store.read_timeline(sid) for p in m.tool_parts]
        origin = forge.store.read_timeline(sid)[0].origin
    assert "decision" not in part.metadata
    assert origin == {"notebook": str(tmp_path / "b.ipynb"), "cell_id": "c1"}
