"""The kernel ↔ front-end protocol is declared once (forge_jupyter/notebook/ops.py): the
TypeScript the front end compiles against is generated from it, and what the kernel sends is
what it declares."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from forge_jupyter import bus
from forge_jupyter.message import (
    Event,
    Message,
    PatchFile,
    PatchPart,
    StepFinishPart,
    TextPart,
    Tokens,
    ToolPart,
)
from forge_jupyter.notebook import ops, panel_protocol
from forge_jupyter.notebook.turn_state import Pending, TurnState

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "gen_ts_protocol.py"
GENERATED = ROOT / "labextension" / "src" / "protocol.generated.ts"
S = "ses_1"


def test_the_committed_typescript_matches_a_fresh_generation(tmp_path):
    out = tmp_path / "protocol.generated.ts"
    done = subprocess.run([sys.executable, str(SCRIPT), "--out", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert out.read_text() == GENERATED.read_text(), (
        "labextension/src/protocol.generated.ts is stale: run python scripts/gen_ts_protocol.py "
        "and commit the result")


def test_every_part_type_and_op_is_a_typescript_type():
    text = GENERATED.read_text()
    from forge_jupyter.message import PART_TYPES

    for part_type in PART_TYPES:
        assert f'  type: "{part_type}";\n' in text, part_type
    for op in ops.literals(ops.Op, "op"):
        assert f'  op: "{op}";\n' in text, op


def a_turn() -> tuple[TurnState, list[ops.Op]]:
    """A turn that produces every op: text streamed, a tool asked, denied by a rule, its
    output and display, a question answered, a notice, usage, a patch."""
    state, pend = TurnState(), Pending()
    user = Message(session_id=S, role="user")
    reply = Message(session_id=S, role="assistant", parent_id=user.id)
    text = TextPart(session_id=S, message_id=reply.id, text="Hel", time_start=1.0)
    tool = ToolPart(session_id=S, message_id=reply.id, call_id="c1", tool="python",
                    input={"code": "1+1"}).start(at=2.0)
    events = [
        bus.SessionStatus(S, "busy"), bus.MessageUpdated(user), bus.MessageUpdated(reply),
        bus.PartUpdated(text), bus.PartDelta(S, reply.id, text.id, "text", "lo"),
        bus.PartUpdated(tool), bus.ToolOutput(S, tool.id, "stdout", "2\n"),
        bus.DisplayData(S, tool.id, {"text/plain": "2"}),
        bus.ApprovalRequested(S, "apr_1", tool.id, "python", {"code": "1+1"}, "python:*=ask"),
        bus.ApprovalAnswered(S, "apr_1", "once", None),
        bus.EventRecorded(Event(session_id=S, type="permission.answered", actor="widget",
                                data={"request_id": "apr_1", "answer": "once"})),
        bus.EventRecorded(Event(session_id=S, type="permission.denied", actor="forge",
                                data={"part_id": tool.id, "rule": "python:*=deny",
                                      "reason": "no"})),
        bus.QuestionAsked(S, "qst_1", tool.id, "Which?", ("a", "b")),
        bus.QuestionAnswered(S, "qst_1", "a", by="widget"),
        bus.SessionStatus(S, "notice", {"message": "heads up"}),
        bus.PartUpdated(StepFinishPart(session_id=S, message_id=reply.id,
                                       tokens=Tokens(input=3, output=4), cost=None)),
        bus.PartUpdated(PatchPart(session_id=S, message_id=reply.id,
                                  files=[PatchFile(path="a.py", diff="+x", additions=1)])),
        bus.SessionStatus(S, "retry", {"attempt": 1, "wait": 0.5}),
    ]
    sent: list[ops.Op] = []
    for ev in events:
        state.ingest(ev, pend)
        sent += pend.drain()
    state.done = True
    pend.once({"op": "done"})
    sent += pend.drain()
    return state, sent


def test_what_the_kernel_sends_is_what_ops_declares():
    state, sent = a_turn()
    every = set(ops.literals(ops.Op, "op"))
    assert {op["op"] for op in sent} == every  # the turn above reaches every declared op
    assert {op["op"] for op in state.snapshot_ops()} == every - {"delta"}
    message = ops.adapter("WidgetMessage")
    message.validate_python({"kind": "batch", "seq": 1, "ops": sent}, strict=True)
    message.validate_python({"kind": "snapshot", "seq": 2, "ops": state.snapshot_ops()},
                            strict=True)


@pytest.mark.parametrize("bad", [
    {"op": "part", "part": {"type": "text", "text": "no ids"}},
    {"op": "delta", "id": "p", "message_id": None, "field": "text", "text": "x", "extra": 1},
    {"op": "approval", "request": {"id": "a", "part_id": "p", "tool": "t", "input": {}}},
    {"op": "answered", "id": "a", "answer": "maybe", "reason": None},
    {"op": "no-such-op"},
])
def test_an_op_that_ops_does_not_declare_is_refused(bad):
    with pytest.raises(ValidationError):
        ops.adapter("Op").validate_python(bad, strict=True)


def test_the_panel_accepts_the_declared_commands_only():
    assert panel_protocol.TYPES == ("hello", "approve", "answer", "stop", "cells", "complete",
                                   "image", "cell-edited", "cell-reviewed", "cells-reverted")
    assert panel_protocol.ANSWERS == ("once", "session", "deny")
    assert panel_protocol.PROTOCOL == ops.PROTOCOL
    command = ops.adapter("PanelCommand")
    for data in ({"type": "hello"}, {"type": "stop", "session_id": "ses_1", "turn_id": ""},
                 {"type": "approve", "request_id": "apr_1", "answer": "deny", "reason": "no"},
                 {"type": "answer", "request_id": "qst_1", "text": "a"},
                 {"type": "cells-reverted", "request_id": "edit_1", "ok": True, "error": "",
                  "outcomes": [{"change_id": "chg_1", "outcome": "changed", "detail": ""}]}):
        command.validate_python(data, strict=True)
        panel_protocol.parse(data)  # and the kernel's own checks take it
    with pytest.raises(panel_protocol.PanelError, match="each outcome is one of restored"):
        panel_protocol.parse({"type": "cells-reverted", "request_id": "edit_1", "ok": True,
                              "outcomes": [{"change_id": "chg_1", "outcome": "rm -rf"}]})
    # a page's "before" that does not fit its shape is left out, never trusted whole
    edited = panel_protocol.parse({"type": "cell-edited", "request_id": "edit_1", "ok": True,
                                   "cell_id": "c1", "index": 0, "before": {
                                       "source": 7, "index": -3, "previous": "../x",
                                       "cell": {"cell_type": "code", "source": "x"}}})
    assert edited.before == {"cell": {"cell_type": "code", "source": "x"}}
    assert ops.literals(ops.ViewMessage, "type") == (
        "ready", "hello", "stop", "approve", "answer", "code")


def test_importing_the_declaration_loads_no_pydantic():
    code = ("import sys; import forge_jupyter.notebook.ops, forge_jupyter.notebook.turn_state; "
            "print('pydantic' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.stdout.strip() == "False", done.stderr
