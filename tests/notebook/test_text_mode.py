"""Outside a kernel (a script, terminal IPython) a TurnView streams the turn as plain text."""

from __future__ import annotations

from forge_jupyter.notebook.turn_state import Pending
from forge_jupyter.notebook.widget import TurnView
from forge_jupyter.testing import Turn, reasoning, text, tool_call


def test_terminal_text_mode_prints_text_tool_lines_and_errors(make_forge, server, capsys):
    forge = make_forge()

    @forge.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    server.add(Turn([reasoning("Adding."), text("Let me add."), tool_call("add", {"a": 2, "b": 3})]),
               Turn.text("2 + 3 = 5."))
    session = forge.session()
    view = TurnView(forge, session).start()
    assert view.fallback and view.widget is None
    answer = session.prompt("What is 2 + 3?")
    view.finish(session.messages())
    out = capsys.readouterr().out
    took = out.split("✓ add completed in ")[1].split("\n")[0]
    assert out == ("· thinking…\nLet me add.\n▸ add running\n"
                   f"✓ add completed in {took}\n\n2 + 3 = 5.\n")
    assert answer.text == "2 + 3 = 5."


def test_pending_keeps_the_latest_row_and_concatenates_fragments():
    pending = Pending()
    row = {"id": "prt_1", "type": "text", "text": ""}
    pending.part(row)

    class Delta:
        part_id, message_id, field = "prt_1", "msg_1", "text"

        def __init__(self, delta):
            self.delta = delta

    for piece in ("Hel", "lo", " wor", "ld  "):
        pending.delta(Delta(piece))
    ops = pending.drain()
    assert ops == [{"op": "part", "part": row},
                   {"op": "delta", "id": "prt_1", "message_id": "msg_1", "field": "text",
                    "text": "Hello world  "}]
    # The full row at the block's end replaces the fragments: the final text is exact.
    pending.delta(Delta("more"))
    final = {"id": "prt_1", "type": "text", "text": "Hello world more"}
    pending.part(final)
    assert pending.drain() == [{"op": "part", "part": final}]
    assert not pending


def test_a_call_nobody_could_approve_says_denied_by_whom_and_how_to_allow_it(make_forge, server, capsys):
    forge = make_forge()

    @forge.tool(mutating=True)
    def write_note(text: str) -> str:
        """Append a line to notes.txt."""
        return "wrote it"

    server.add(Turn([tool_call("write_note", {"text": "hi"})]), Turn.text("I could not write it."))
    session = forge.session()
    view = TurnView(forge, session).start()
    session.prompt("Note hi.")
    view.finish(session.messages())
    out = capsys.readouterr().out
    assert "✗ write_note denied by forge — no one can answer approvals here (no approval handler " \
           "is registered, as in a plain script)\n" in out
    assert "  To allow it: answer in a frontend that shows widgets, or add a permission rule, " \
           "e.g. %config Forge.permissions = ['write_note:*=allow']\n" in out
    assert "failed" not in out  # a denial is not a failure


def test_whole_lines_and_a_notice_waits_for_the_paragraph_it_arrived_in():
    from forge_jupyter.notebook.text_printer import TextPrinter, first_paragraph

    writes: list[str] = []
    printer = TextPrinter(writes.append, whole_lines=True)
    part = {"id": "prt_1", "message_id": "msg_1", "type": "text", "text": ""}
    printer.ops([{"op": "part", "part": part},
                 {"op": "delta", "id": "prt_1", "field": "text", "text": "I'm the offline demo"},
                 {"op": "notice", "message": "using the OFFLINE DEMO model"},
                 {"op": "delta", "id": "prt_1", "field": "text", "text": " model.\nSecond li"},
                 {"op": "delta", "id": "prt_1", "field": "text", "text": "ne ends here."},
                 {"op": "part", "part": {**part, "text": "I'm the offline demo model.\nSecond line "
                                                         "ends here.", "time_end": 1.0}},
                 {"op": "done"}])
    # Each write is one stream output: none ends in the middle of a line.
    assert writes[0] == "I'm the offline demo model.\n"
    assert all(w.endswith("\n") for w in writes), writes
    assert "".join(writes) == ("I'm the offline demo model.\nSecond line ends here.\n"
                               "note: using the OFFLINE DEMO model\n")
    long = ("Permission denied: write needs a person's approval and no one can answer. " * 12).strip()
    cut = first_paragraph(long, 200)
    assert cut.endswith("answer. …") and len(cut) <= 203
