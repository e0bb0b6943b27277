"""The agent sees the notebook it runs in (issue 27, items 1 and 2): a headless notebook run by
nbclient in a real kernel, whose ``%%forge`` cells are answered by the fake model server; what
the model was sent — the context note, notebook_read's results — is read off the recorded
requests."""

from __future__ import annotations

import json
from typing import Any

import nbformat
import pytest

from forge_jupyter.testing import FakeModelServer, Turn, tool_call
from tests.notebook.replay_nb import notebook, run

SECRET = "sk-proj-" + "Zq7" * 12  # shaped like an OpenAI key: scrubbed wherever it shows
FAILING = "def ratio(a, b):\n    return a / b\n\nratio(1, 0)"


def _user_texts(request: Any) -> str:
    return "\n".join(m["content"] for m in request.messages
                     if m["role"] == "user" and isinstance(m["content"], str))


def _tool_results(server: FakeModelServer) -> list[str]:
    return [m["content"] for r in server.requests for m in r.messages[-1:] if m["role"] == "tool"]


@pytest.fixture(scope="module")
def executed(tmp_path_factory) -> tuple[Any, FakeModelServer, list[str]]:
    """One notebook: a few cells (a DataFrame, HTML with a script and a base64 image, a printed
    secret, a failing cell), saved to disk first so the kernel reads the file, then a %%forge
    cell whose model reads the notebook three ways; then a second prompt."""
    root = tmp_path_factory.mktemp("read")
    big_png = "iVBORw0KGgo" + "A" * 4000
    sources = [
        "import pandas as pd\ndf = pd.DataFrame({'city': ['Oslo', 'Lima'], 'temp': [3, 19]})\ndf",
        "from IPython.display import HTML\nHTML('<h2>Report</h2><script>alert(1)</script>"
        f"<img src=\"data:image/png;base64,{big_png}\"><p>' + 'word ' * 5000 + '</p>')",
        f"print('token = {SECRET}')",
        FAILING,
        "%%forge\nWhy did the cell above fail?",
        "%%forge\nAnd now?",
    ]
    with FakeModelServer() as server:
        server.add(Turn([tool_call("notebook_read", {})]),
                   Turn([tool_call("notebook_read", {"search": "ratio"})]),
                   Turn([tool_call("notebook_read", {"start": 1, "end": 3})]),
                   Turn.text("It divides by zero."),
                   Turn.text("Nothing new ran."))
        nb = notebook(*sources)
        path = root / "analysis.ipynb"
        nbformat.write(nb, path)  # the saved file the kernel reads (nbclient does not save)
        nb = run(nb, root, server.openai_base, allow_errors=True)
        results = _tool_results(server)
        return nb, server, results


def test_the_prompt_carries_the_failing_cells_error(executed):
    _nb, server, _ = executed
    first = _user_texts(server.requests[0])
    assert "Why did the cell above fail?" in first, first
    assert "[Notebook context, written by forge: Notebook analysis.ipynb, 7 cells" in first
    assert "This prompt is cell #5" in first and "In [6]" in first, first
    assert "Ran since the last turn: In [2] ok, In [3] ok, In [4] ok, In [5] failed" in first
    assert "The last run failed: ZeroDivisionError: division by zero" in first
    assert "In [5], line 2, in ratio → return a / b" in first  # the last frames, from the kernel
    assert "interactiveshell.py" not in first  # IPython's own frame is not the person's


def test_the_second_prompt_counts_only_what_ran_since(executed):
    _nb, server, _ = executed
    second = _user_texts(server.requests[-1])
    assert "No cells ran since the last turn." in second.split("And now?")[-1]


def test_the_listing_names_every_cell_and_where_it_was_read(executed):
    _nb, _server, results = executed
    listing = results[0]
    assert "Notebook analysis.ipynb: 7 cells. Read from the saved notebook file" in listing
    assert "#4 · code" in listing and "failed (ZeroDivisionError)" in listing
    assert "#0 · code" in listing and "%load_ext forge_jupyter" in listing
    assert "not in the saved file" not in listing  # every execution found its cell


def test_a_search_finds_the_failing_cell_with_its_traceback(executed):
    _nb, _server, results = executed
    found = results[1]
    assert "cell(s) mention 'ratio'" in found
    assert "def ratio(a, b):" in found
    assert "ZeroDivisionError" in found and "return a / b" in found


def test_a_range_reads_outputs_bounded_scrubbed_and_as_text(executed):
    _nb, _server, results = executed
    cells = results[2]
    assert "Oslo" in cells and "<table" not in cells  # the DataFrame as its text form
    html = cells.split("HTML('<h2>")[1].split("── outputs (1) ──")[1].split("── #3")[0]
    assert "Report" in html and "alert(1)" not in html  # HTML as text, the script dropped
    assert "[HTML output read as text; scripts and styles dropped]" in html
    assert "iVBORw0KGgo" not in cells and "[inline image/png" in cells
    assert "[output cut at" in cells  # the 25,000-character paragraph: cut, and said
    assert SECRET not in json.dumps(results) and "[secret:" in cells


@pytest.fixture(scope="module")
def unsaved_plan_no_note(tmp_path_factory) -> tuple[FakeModelServer, list[str]]:
    """A notebook never saved, the plan agent, the context note turned off by its variable."""
    root = tmp_path_factory.mktemp("unsaved")
    with FakeModelServer() as server:
        server.add(Turn([tool_call("notebook_read", {"execution_count": 2})]), Turn.text("Seen."))
        nb = notebook("total = sum(range(10))\ntotal", "%%forge\nWhat is total?")
        run(nb, root, server.openai_base, name="Untitled.ipynb",
            env={"FORGE_NOTEBOOK_CONTEXT": "0", "FORGE_AGENT": "plan"})
        return server, _tool_results(server)


def test_the_note_is_off_when_its_setting_says_so(unsaved_plan_no_note):
    server, _ = unsaved_plan_no_note
    first = _user_texts(server.requests[0])
    assert "What is total?" in first and "Notebook context" not in first
    assert "notebook_read" in server.requests[0].tools  # the tool is there either way


def test_plan_mode_reads_an_unsaved_notebook_from_the_kernels_history(unsaved_plan_no_note):
    _server, results = unsaved_plan_no_note
    [result] = results
    assert "Read from this kernel's history only" in result
    assert "the notebook has not been saved yet" in result
    assert "total = sum(range(10))" in result and "45" in result


def _png(side: int) -> bytes:
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (side, side // 2), (200, 30, 30)).save(buf, "PNG")
    return buf.getvalue()


def _image_urls(request: Any) -> list[str]:
    return [c["image_url"]["url"] for m in request.messages if isinstance(m.get("content"), list)
            for c in m["content"] if c.get("type") == "image_url"]


@pytest.fixture(scope="module")
def saved_chart(tmp_path_factory) -> FakeModelServer:
    """A notebook opened with a chart in its saved outputs (that cell not run in this kernel):
    a vision model's notebook_read gets the chart as an image, a model without vision only its
    text line."""
    import base64

    root = tmp_path_factory.mktemp("chart")
    png = base64.b64encode(_png(400)).decode()
    chart = nbformat.v4.new_code_cell("df.plot()", execution_count=7, outputs=[
        nbformat.v4.new_output("display_data", data={"image/png": png, "text/plain": "<Axes>"},
                               metadata={"image/png": {"width": 400, "height": 200}})])
    asks = ["%%forge\nWhat does the chart show?",
            "%%forge -m openai/gpt-3.5-turbo --new\nAnd without eyes?"]
    saved = notebook()
    saved.cells += [chart] + [nbformat.v4.new_code_cell(a) for a in asks]
    nbformat.write(saved, root / "analysis.ipynb")
    with FakeModelServer() as server:
        server.add(Turn([tool_call("notebook_read", {"index": 1})]), Turn.text("A red band."),
                   Turn([tool_call("notebook_read", {"index": 1})]), Turn.text("A chart."))
        run(notebook(*asks), root, server.openai_base)
        return server


def test_a_saved_chart_reaches_a_vision_model_as_an_image(saved_chart):
    import base64
    import io

    from PIL import Image

    after_read = saved_chart.requests[1]
    [result] = [m["content"] for m in after_read.messages if m["role"] == "tool"]
    assert "not run in this kernel (saved output)" in result
    assert "[image/png 400×200" in result  # its text line, for any model
    assert "go with this result, in order, to a model that takes images: image/png 400×200 " \
        "from cell #1" in result
    [url] = _image_urls(after_read)
    assert Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).size == (400, 200)


def test_a_model_without_vision_gets_the_charts_text_line_only(saved_chart):
    after_read = saved_chart.requests[3]
    assert after_read.model.endswith("gpt-3.5-turbo")
    [result] = [m["content"] for m in after_read.messages if m["role"] == "tool"]
    assert "[image/png 400×200" in result
    assert _image_urls(after_read) == []
