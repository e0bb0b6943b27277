"""What counts as a re-run tool call giving another result (session/replay_diff.py)."""

from __future__ import annotations

from forge_jupyter.message import ToolPart
from forge_jupyter.session.replay_diff import difference


def _call(output: str | None = None, error: str | None = None) -> ToolPart:
    part = ToolPart(session_id="ses_1", message_id="msg_1", call_id="c", tool="python").start()
    return part.fail(error) if error is not None else part.complete(output or "")


def test_the_same_output_up_to_addresses_and_trailing_space_is_the_same_result():
    assert difference(_call("<Obj at 0x7f3a2b1c9d40>\n(3, 2)  "),
                      _call("<Obj at 0x7f99aa00bb11>\n(3, 2)")) is None


def test_the_same_traceback_of_another_run_is_the_same_result():
    recorded = 'File "<forge-cell-3>", line 1\nZeroDivisionError: division by zero'
    again = 'File "<forge-cell-41>", line 1\nZeroDivisionError: division by zero'
    assert difference(_call(error=recorded), _call(error=again)) is None
    saved = "saved to /out/ses_01ab/prt_01cd-stdout.txt"
    assert difference(_call(saved), _call(saved.replace("01ab", "99zz").replace("01cd", "7x"))) is None


def test_an_error_where_there_was_none_is_named_by_its_last_line():
    said = difference(_call("(3, 2)"),
                      _call(error="Traceback (most recent call last):\nFileNotFoundError: data.csv"))
    assert said == "it now fails where it succeeded: FileNotFoundError: data.csv"


def test_success_where_it_failed_is_a_difference_too():
    assert difference(_call(error="NameError: x"), _call("1")) == (
        "it now succeeds where it failed when recorded")


def test_another_value_or_shape_names_the_first_line_that_differs():
    said = difference(_call("rows:\n(3, 2)"), _call("rows:\n(4, 2)"))
    assert said == "its output changed: recorded '(3, 2)', now '(4, 2)'"
    assert "(nothing more)" in difference(_call("a\nb"), _call("a"))
