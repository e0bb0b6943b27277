"""The first %%forge cell of a kernel: %load_ext returns at once, the model client loads in
the background, and a cell that comes before it is done says so and then runs (issue 12)."""

from __future__ import annotations

import pytest

from forge_jupyter.notebook.warmup import LOADING
from forge_jupyter.testing import FakeModelServer, Turn, tool_call
from tests.notebook.nb_kernel import Kernel

pytestmark = pytest.mark.slow

CONTROLLER = "from forge_jupyter.notebook.extension import controller\n"


@pytest.fixture
def server():
    with FakeModelServer() as s:
        yield s


@pytest.fixture
def kernel(server, tmp_path):
    k = Kernel({"FORGE_MODEL": "openai/gpt-4o-mini", "FORGE_API_BASE": server.openai_base,
                "FORGE_API_KEY": "sk-fake", "FORGE_DB": str(tmp_path / "forge.duckdb"),
                "FORGE_WIDGET": "off"}, cwd=str(tmp_path))
    yield k
    k.close()


def test_load_ext_returns_before_litellm_loads_and_a_first_cell_says_it_is_loading(kernel, server):
    server.add(Turn.text("Hello, first cell."))
    r = kernel.run("%load_ext forge_jupyter\nimport sys\nprint('litellm' in sys.modules)")
    assert r.status == "ok" and r.stdout.strip() == "False"  # nothing heavy on the way in
    first = kernel.run("%%forge\nSay hello")  # at once: the warm-up is still running
    assert first.status == "ok", first.error
    assert first.stdout.startswith(LOADING + "\n"), first.stdout[:200]
    assert "Hello, first cell." in first.stdout
    assert "Hello, first cell." in first.results[0]["text/html"]
    done = kernel.run(CONTROLLER + "w = controller().warmup\nw.future.result(120)\n"
                      "w.thread.join(120)\nprint(list(w.timings), 'litellm' in sys.modules)")
    # a cell was waiting: the tool-argument validator loaded after what its request needed
    assert done.stdout.strip() == ("['widget', 'forge', 'store', 'quiet', 'litellm', 'rehearsal', "
                                   "'validation'] True")
    assert len(server.requests) == 1, "the warm-up's rehearsal sends nothing"


def test_a_tool_call_of_the_first_cell_is_validated_before_the_validator_has_warmed_up(
        kernel, server):
    """The warm-up loads the tool-argument validator last when a cell is waiting; a tool call
    that comes first loads it itself and its arguments are checked all the same."""
    server.add(Turn([tool_call("python", {"code": 5})]), Turn.text("Done."))
    kernel.run("%load_ext forge_jupyter")
    first = kernel.run("%%forge\nRun it")  # at once: a cell waits, the validator comes last
    assert first.status == "ok", first.error
    refused = "Invalid arguments for python: code: 5 is not of type 'string'"
    assert refused in first.stdout and "Done." in first.stdout
    assert refused in server.requests[1].body["messages"][-1]["content"]  # the model read it


def test_a_cell_after_the_warm_up_finds_the_forge_built_and_says_nothing_of_loading(kernel, server):
    server.add(Turn.text("Warm already."))
    kernel.run("%load_ext forge_jupyter")
    r = kernel.run(CONTROLLER + "controller().warmup.future.result(120)\n"
                   "print(controller().built)")
    assert r.stdout.strip() == "True"  # the store was opened in the background
    cell = kernel.run("%%forge\nAnything")
    assert cell.status == "ok", cell.error
    assert LOADING not in cell.stdout and "Warm already." in cell.stdout
