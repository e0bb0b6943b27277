"""Pointing at things (issue 27, item 4) in a real kernel: a headless notebook run by nbclient
whose ``%%forge`` cells mention a variable, a cell, the last error and files; what the model
was sent is read off the fake server's recorded requests, and a mention of nothing — or of a
file the read tool refuses — fails its cell and sends nothing."""

from __future__ import annotations

from typing import Any

import nbformat
import pytest

from forge_jupyter.testing import FakeModelServer, Turn
from tests.notebook.replay_nb import notebook, run

SECRET = "sk-proj-" + "Qw8" * 12  # shaped like an OpenAI key: scrubbed wherever it shows
RATIO = ("def ratio(a, b):\n    # the second quarter's ratio\n    return a / b\n\n"
         "ratio(1, 0)")


def _sent(request: Any) -> str:
    return "\n".join(m["content"] for m in request.messages
                     if m["role"] == "user" and isinstance(m["content"], str))


def _error(cell: Any) -> str:
    """A refused cell's one line (IPython prints a UsageError on stderr, without a traceback)."""
    [out] = cell.outputs
    assert out.output_type == "stream" and out.name == "stderr", cell.outputs
    return out.text


@pytest.fixture(scope="module")
def executed(tmp_path_factory) -> tuple[Any, FakeModelServer]:
    top = tmp_path_factory.mktemp("mentions")
    root = top / "work"
    root.mkdir()
    (top / "outside.txt").write_text("the outside words\n")
    (root / "notes.txt").write_text("the quarterly notes say: north leads\n")
    (root / "keys.txt").write_text(f"OPENAI_API_KEY={SECRET}\nthe key file's own line\n")
    (root / "escape.txt").symlink_to(top / "outside.txt")
    sources = [
        "import pandas as pd\nsales = pd.DataFrame({'region': ['north', 'south'], "
        "'units': [120, 75]})",
        RATIO,
        "print('hello from In 4')",
        "%%forge\nWhy did @error happen, and what is in @sales? See @In[4] and "
        "@file:notes.txt. Mail bob@example.com; @@home is literal.",
        "%%forge\nRead @file:../outside.txt",
        "%%forge\nRead @file:escape.txt",
        "%%forge\nRead @file:forge.duckdb",
        "%%forge\nWhat about @nosuch?",
        "%%forge\nWhat about @In[99]?",
        "@CELL Fix the error in this cell.",  # the id is filled in below
        "%%forge\nCheck @file:keys.txt",
        "label = 'x'\n",
        "%%forge\n{label} and @label",
    ]
    with FakeModelServer() as server:
        server.add(Turn.text("It divides by zero."), Turn.text("Fixed."), Turn.text("Scrubbed."),
                   Turn.text("Both."))
        nb = notebook(*sources)
        ratio_id = nb.cells[2].id
        nb.cells[10].source = f"%%forge\n@cell:{ratio_id} Fix the error in this cell."
        nbformat.write(nb, root / "analysis.ipynb")  # the saved file the kernel reads
        nb = run(nb, root, server.openai_base, allow_errors=True)
        return nb, server, ratio_id


def test_a_prompt_carries_the_variable_the_cell_the_error_and_the_file(executed):
    nb, server, _ = executed
    sent = _sent(server.requests[0])
    # the person's words, @@ made @, the address left alone
    assert "Mail bob@example.com; @home is literal." in sent, sent
    # @sales: what the variables tool says of it
    assert "[@sales, attached by forge: the variable sales" in sent
    assert "sales: DataFrame 2 rows × 2 columns" in sent and "north" in sent
    # @error: the error, its frames, and its cell's source
    assert "[@error, attached by forge: the last error]" in sent
    assert "In [3] failed: ZeroDivisionError: division by zero" in sent
    assert "In [3], line 3, in ratio → return a / b" in sent
    assert "the second quarter's ratio" in sent
    # @In[4]: that cell's source
    assert "[@In[4], attached by forge: the cell that ran as In [4]" in sent
    assert "print('hello from In 4')" in sent
    # @file: the read tool's numbered lines
    assert "[@file:notes.txt, attached by forge: the file notes.txt" in sent
    assert "     1\tthe quarterly notes say: north leads" in sent
    assert "stderr" not in {o.get("name") for o in nb.cells[4].outputs}


@pytest.mark.parametrize("index, says", [
    (5, "outside the root directory"),
    (6, "symbolic link to a place outside the root"),
    (7, "of this Forge's store"),
    (8, "@nosuch points at nothing: the notebook has no variable 'nosuch'. Variables: "
        "@sales. Write @@ for a literal @."),  # the person's variables (not pd, not ratio)
    (9, "@In[99] points at nothing: no cell ran as In [99]. Cells that ran: In [1], In [2]"),
])
def test_a_mention_of_nothing_or_of_a_refused_file_fails_its_cell_and_sends_nothing(
        executed, index, says):
    nb, server, _ = executed
    text = _error(nb.cells[index])
    assert text.startswith("UsageError: "), text
    assert says in text, text
    assert len(server.requests) == 4  # only the four prompts that pointed at something there


def test_fix_with_forges_cell_mention_sends_the_cells_source_and_traceback(executed):
    _nb, server, ratio_id = executed
    sent = _sent(server.requests[1])
    assert f"@cell:{ratio_id} Fix the error in this cell." in sent
    assert f"[@cell:{ratio_id}, attached by forge: the cell with id {ratio_id}" in sent
    assert "the second quarter's ratio" in sent and "ZeroDivisionError" in sent
    assert "return a / b" in sent


def test_an_attached_file_is_scrubbed_of_secrets(executed):
    _nb, server, _ = executed
    sent = _sent(server.requests[2])
    assert "the key file's own line" in sent
    assert SECRET not in sent and "[secret:" in sent


def test_interpolation_still_fills_in_and_a_filled_in_value_is_no_mention(executed):
    nb, server, _ = executed
    sent = _sent(server.requests[3])
    assert "x and @label" in sent and "[@label, attached by forge" in sent
    assert "label: str" in sent
