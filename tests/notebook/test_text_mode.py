"""Outside a kernel (a script, terminal IPython) a TurnView streams the turn as plain text."""

from __future__ import annotations

from forge_jupyter.notebook.widget import Pending, TurnView
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
