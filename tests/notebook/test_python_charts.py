"""Charts an agent's ``python`` call draws stay in that call's card, each once, and the model is
told of each (issue 26, bugs 2 and 3) — and, the model having vision, sent each (issue 27): a headless notebook (nbclient, a real kernel, matplotlib's
inline backend) whose cells each run one call against the fake model server."""

from __future__ import annotations

import re
from typing import Any

import pytest

from forge_jupyter.testing import FakeModelServer, Turn, tool_call
from tests.notebook.replay_nb import notebook, run

pytest.importorskip("matplotlib")

PLT = "import matplotlib.pyplot as plt\n"
CALLS = {  # what the model's code does → how many charts it shows
    "show": (PLT + "plt.plot([1, 2, 3])\nplt.title('shown')\nplt.show()", 1),
    "figure_as_last_expression": (PLT + "fig, ax = plt.subplots()\nax.plot([3, 1, 2])\nfig", 1),
    "no_show": (PLT + "plt.plot([1, 4, 9])", 1),
    "two_figures": (PLT + "plt.figure()\nplt.plot([1, 2])\nplt.figure()\nplt.bar([1, 2], [3, 4])"
                    "\nplt.show()", 2),
    "closed_before_the_end": (PLT + "fig = plt.figure()\nplt.plot([1, 2])\nplt.close(fig)\n"
                              "print('closed')", 0),
    "show_then_the_figure": (PLT + "fig, ax = plt.subplots()\nax.plot([2, 2])\nplt.show()\nfig", 1),
}
IMG = re.compile(r'<img src="data:image/png;base64,')
TOLD = re.compile(r"\[image/png \d+×\d+, shown to the user\]")


@pytest.fixture(scope="module", params=["record", "text"])
def executed(request, tmp_path_factory) -> tuple[str, Any, list[str]]:
    """The notebook run once per way a headless cell shows a turn (one kernel each): the live
    widget that no view answers, which leaves the turn's record, or text (FORGE_WIDGET=off);
    its cells, and each call's result as the model read it."""
    root = tmp_path_factory.mktemp("charts")
    with FakeModelServer() as server:
        for code, _ in CALLS.values():
            server.add(Turn([tool_call("python", {"code": code})]), Turn.text("Drawn."))
        nb = notebook("import matplotlib; print(matplotlib.get_backend())",
                      *(f"%%forge\nDraw the {name}." for name in CALLS))
        widget = None if request.param == "record" else "off"
        nb = run(nb, root, server.openai_base, env={"FORGE_WIDGET": widget})
        results = [r for r in map(_after_the_call, server.requests) if r is not None]
    assert "inline" in nb.cells[1].outputs[0]["text"]  # the backend a notebook plots with
    return request.param, nb, results


def _after_the_call(request: Any) -> tuple[str, int] | None:
    """What the request after a call says of it: the tool result's text, and how many image
    parts follow it (gpt-4o-mini has vision: the charts themselves, issue 27)."""
    messages = request.messages
    last = max((i for i, m in enumerate(messages) if m["role"] == "assistant"), default=-1)
    tail = messages[last + 1:]
    tools = [m["content"] for m in tail if m["role"] == "tool"]
    if not tools:
        return None
    images = sum(1 for m in tail if isinstance(m.get("content"), list)
                 for c in m["content"] if c.get("type") == "image_url")
    return tools[-1], images


def _images_outside_the_record(cell: Any) -> list[dict[str, Any]]:
    return [o for o in cell.outputs if "image/png" in o.get("data", {})]


def _record(cell: Any) -> str:
    [html] = [o["data"]["text/html"] for o in cell.outputs
              if "forge-record" in o.get("data", {}).get("text/html", "")]
    return html


@pytest.mark.parametrize("name", list(CALLS))
def test_a_chart_stays_in_its_call_and_the_model_is_told_once(executed, name):
    mode, nb, results = executed
    index = list(CALLS).index(name)
    cell, (told, sent) = nb.cells[2 + index], results[index]
    code, charts = CALLS[name]
    if mode == "record":
        assert _images_outside_the_record(cell) == [], "a chart escaped its call into the cell"
        record = _record(cell)
        assert len(IMG.findall(record)) == charts, record[:2000]
        if charts:  # in the call's card: after the call, before the answer
            assert record.index("import matplotlib.pyplot as plt") < IMG.search(record).start()
    else:  # as text: each chart once, between its call's line and the answer
        kinds = ["image" if "image/png" in o.get("data", {}) else o["output_type"]
                 for o in cell.outputs]
        assert kinds.count("image") == charts, kinds
        if charts:
            first = kinds.index("image")
            before = "".join(o.get("text", "") for o in cell.outputs[:first])
            assert "python" in before and "completed" not in before.split("python")[-1], before
            assert kinds.index("execute_result") > max(i for i, k in enumerate(kinds) if k == "image")
    assert len(TOLD.findall(told)) == charts, told
    assert sent == charts  # and a vision model is sent each chart itself
    assert "<Figure size" not in told  # the figure is summarised, not repr'd
    if name == "closed_before_the_end":
        assert told == "closed"
