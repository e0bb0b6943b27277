"""Facts a tool call carries to the Processor — the files it changed, a doom loop — are typed
on the part (``ToolPart.changes``, ``ToolPart.doom_loop``) and stored where they always were,
in the part's ``metadata``: rows and export files written before read back the same."""

from __future__ import annotations

import json

from forge_jupyter import Forge
from forge_jupyter.message import Message, PatchFile, SessionInfo, ToolPart
from forge_jupyter.store.duckdb.store import DuckDBStore
from forge_jupyter.store.ops import AppendMessage, PutMessage, PutPart
from forge_jupyter.testing import Turn, tool_call
from forge_jupyter.tools.base import ToolResult

ONE = {"path": "a.txt", "diff": "--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+a\n",
       "additions": 1, "deletions": 0}
TWO = {"path": "b.txt", "diff": "--- a/b.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-b\n",
       "additions": 0, "deletions": 1}


def _old_rows(session_id: str) -> tuple[Message, list[ToolPart]]:
    """Tool parts as earlier versions wrote them: the facts as bare dicts in ``metadata``."""
    m = Message(session_id=session_id, role="assistant", status="completed")
    ids = {"session_id": session_id, "message_id": m.id, "tool": "write", "state": "completed",
           "output": "ok", "time_start": 1.0, "time_end": 2.0}
    parts = [ToolPart(**ids, call_id="c1", metadata={"patch": dict(ONE), "replacements": 0}),
             ToolPart(**ids, call_id="c2", metadata={"patches": [dict(ONE), dict(TWO)]}),
             ToolPart(**{**ids, "state": "error", "output": None}, call_id="c3", error="loop",
                      metadata={"doom_loop": True}),
             ToolPart(**ids, call_id="c4")]
    return m, parts


def _facts(parts: list[ToolPart]) -> list[tuple[list[PatchFile], bool]]:
    return [(p.changes, p.doom_loop) for p in sorted(parts, key=lambda p: p.call_id)]


EXPECTED = [([PatchFile(**ONE)], False), ([PatchFile(**ONE), PatchFile(**TWO)], False),
            ([], True), ([], False)]


def test_rows_stored_with_the_old_metadata_keys_read_back_as_typed_facts(tmp_path):
    store = DuckDBStore(tmp_path / "old.duckdb")
    session = store.create_session(SessionInfo())
    m, parts = _old_rows(session.id)
    store.write([PutMessage(m), *(PutPart(p) for p in parts), AppendMessage(session.id, m.id)])
    store.close()
    again = DuckDBStore(tmp_path / "old.duckdb")
    (read,) = again.timeline(session.id, limit=10).items
    tools = [p for p in read.parts if isinstance(p, ToolPart)]
    assert _facts(tools) == EXPECTED
    assert tools[0].metadata["patch"] == ONE  # the stored JSON itself is unchanged
    again.close()


def test_an_export_file_with_the_old_metadata_keys_imports_as_typed_facts(tmp_path):
    source = Forge(db=str(tmp_path / "a.duckdb"), builtin_tools=False)
    session = source.store.create_session(SessionInfo(name="old"))
    m, parts = _old_rows(session.id)
    source.store.write([PutMessage(m), *(PutPart(p) for p in parts),
                        AppendMessage(session.id, m.id)])
    path = source.export_session("old", tmp_path / "old.json")
    source.close()
    doc = json.loads(path.read_text())
    assert '"doom_loop": true' in json.dumps(doc) and '"patches": [' in json.dumps(doc)
    target = Forge(db=str(tmp_path / "b.duckdb"), builtin_tools=False)
    imported = target.import_session(path)
    (read,) = target.store.timeline(imported.id, limit=10).items
    assert _facts([p for p in read.parts if isinstance(p, ToolPart)]) == EXPECTED
    target.close()


def test_completing_with_changes_stores_them_where_old_readers_look():
    one = ToolPart(session_id="s", message_id="m", call_id="c", tool="write")
    one.complete("ok", changes=[PatchFile(**ONE)])
    assert one.metadata == {"patch": ONE} and one.changes == [PatchFile(**ONE)]
    two = ToolPart(session_id="s", message_id="m", call_id="d", tool="apply_patch")
    two.complete("ok", changes=[PatchFile(**ONE), PatchFile(**TWO)])
    assert two.metadata == {"patches": [ONE, TWO]}
    looped = ToolPart(session_id="s", message_id="m", call_id="e", tool="x").fail(
        "again", doom_loop=True)
    assert looped.metadata == {"doom_loop": True} and looped.doom_loop


def test_a_tool_that_still_returns_the_old_patch_metadata_gets_its_patch_part(make_forge, server):
    forge = make_forge()

    @forge.tool
    def legacy() -> ToolResult:
        """A plugin tool written against the old metadata convention."""
        return ToolResult("wrote a.txt", metadata={"patch": dict(ONE)})

    server.add(Turn([tool_call("legacy", {})]), "done")
    session = forge.session("s")
    assert session.prompt("go").text == "done"
    parts = [p for m in forge.store.read_timeline(session.id) for p in m.parts]
    assert [f for p in parts if p.type == "patch" for f in p.files] == [PatchFile(**ONE)]
