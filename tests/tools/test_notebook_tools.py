"""The notebook-native builtins through the real loop: python, variables, sql, history, task."""

from __future__ import annotations

import os
import threading
import time
import tracemalloc

import pandas as pd
import pytest

from forge_jupyter.bus import ToolOutput
from forge_jupyter.testing import Turn, tool_call
from forge_jupyter.tools.plugins import hookimpl

ALLOW_PYTHON = ["python:*=allow"]


def _last_call(forge, index=1):
    return forge.session("s").messages()[index].tool_parts[0]


def test_python_runs_in_the_forges_namespace_and_returns_output_and_value(make_forge, server):
    server.add(Turn([tool_call("python", {"code": "print('hi')\ntotal = sum(xs)\ntotal * 2"})]),
               Turn.text("done"))
    forge = make_forge(builtin_tools=True, permissions=ALLOW_PYTHON, namespace={"xs": [1, 2, 3]})
    live = []
    forge.bus.subscribe(lambda e: live.append(e.text), types=ToolOutput)
    forge.session("s").prompt("compute")
    call = _last_call(forge)
    assert call.state == "completed" and call.output == "hi\n12"
    assert forge.namespace["total"] == 6  # the variable stays in the namespace
    assert "".join(live) == "hi\n"  # streamed live to the person


def test_a_long_first_line_titles_the_call_cut_at_a_word_end_with_an_ellipsis(make_forge, server):
    line = "result = " + " + ".join(f"value_number_{i}" for i in range(12))  # ~200 characters
    server.add(Turn([tool_call("python", {"code": "\n" + line + "\nresult"})]), Turn.text("done"))
    names = {f"value_number_{i}": i for i in range(12)}
    forge = make_forge(builtin_tools=True, permissions=ALLOW_PYTHON, namespace=names)
    forge.session("s").prompt("add")
    title = _last_call(forge).title
    assert title is not None and len(title) <= 80 and title.endswith("…"), title
    assert line.startswith(title[:-1]) and line[len(title) - 1] == " ", "cut at a word end"


def test_python_exception_comes_back_with_its_traceback(make_forge, server):
    server.add(Turn([tool_call("python", {"code": "print('before')\n1/0"})]), Turn.text("oops"))
    forge = make_forge(builtin_tools=True, permissions=ALLOW_PYTHON)
    forge.session("s").prompt("divide")
    call = _last_call(forge)
    assert call.state == "error"
    assert call.error.startswith("before\nTraceback")
    assert "ZeroDivisionError: division by zero" in call.error and "processor.py" not in call.error


def test_python_plots_are_summarized_for_the_model(make_forge, server):
    pytest.importorskip("matplotlib")
    code = ("import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
            "plt.figure(figsize=(4, 3), dpi=100)\nplt.plot([1, 2, 3])")
    server.add(Turn([tool_call("python", {"code": code})]), Turn.text("plotted"))
    forge = make_forge(builtin_tools=True, permissions=ALLOW_PYTHON)
    forge.session("s").prompt("plot")
    assert "image/png" in _last_call(forge).output and "×" in _last_call(forge).output


def test_stopping_the_run_interrupts_running_python(make_forge, server):
    server.add(Turn([tool_call("python", {"code": "import time\nwhile True:\n    time.sleep(0.01)"})]))
    forge = make_forge(builtin_tools=True, permissions=ALLOW_PYTHON)
    s = forge.session("s")
    forge.bus.subscribe(lambda e: e.part.type == "tool" and e.part.state == "running"
                        and threading.Timer(0.3, s.abort).start(),
                        types=__import__("forge_jupyter.bus", fromlist=["x"]).PartUpdated)
    started = time.monotonic()
    answer = s.prompt("loop")
    assert answer.status == "aborted" and time.monotonic() - started < 10
    assert not [t for t in threading.enumerate() if t.name == "forge-python" and t.is_alive()]


def test_a_huge_output_is_truncated_with_bounded_memory(make_forge, server, tmp_path):
    code = ("import sys\nblock = ''.join('line %07d of filler text, padded to a hundred bytes '\n"
            "    '..........................................\\n' % i for i in range(10_000))\n"
            "for _ in range(100):\n    sys.stdout.write(block)")
    server.add(Turn([tool_call("python", {"code": code})]), Turn.text("long"))
    forge = make_forge(builtin_tools=True, permissions=ALLOW_PYTHON, output_root=tmp_path)
    tracemalloc.start()
    forge.session("s").prompt("print a lot")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    call = _last_call(forge)
    assert call.state == "completed"
    assert len(call.output.encode()) < 60_000 and "read(" in call.output
    assert call.output.startswith("line 0000000 of filler text")
    assert peak < 20_000_000, f"peak {peak / 1e6:.1f} MB for a 100 MB output"
    [saved] = list(tmp_path.rglob("*.txt"))
    line = "line 0000000 of filler text, padded to a hundred bytes " + "." * 42 + "\n"
    assert saved.stat().st_size == 100 * 10_000 * len(line)  # the whole output, on disk


def test_secrets_never_reach_the_model_or_the_store(make_forge, server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-live-abcdefghijklmnopqrstuvwxyz")
    server.add(Turn([tool_call("python", {"code": "import os\nprint(dict(os.environ))"})]),
               Turn.text("done"))
    forge = make_forge(builtin_tools=True, permissions=ALLOW_PYTHON)
    forge.session("s").prompt("show env")
    call = _last_call(forge)
    assert "sk-live-abcdefghijklmnopqrstuvwxyz" not in call.output
    assert "[secret:OPENAI_API_KEY]" in call.output
    assert "sk-live-abcdef" not in str(server.requests[1].messages)


def test_variables_lists_and_inspects_dataframes(make_forge, server):
    df = pd.DataFrame({"city": ["Oslo", "Lima", "Pune"], "temp": [3.5, 19.0, 31.2]})
    server.add(Turn([tool_call("variables", {}), tool_call("variables", {"name": "df"})]),
               Turn.text("seen"))
    forge = make_forge(builtin_tools=True, namespace={"df": df, "n": 42, "_hidden": 1})
    forge.session("s").prompt("what do I have?")
    listing, detail = forge.session("s").messages()[1].tool_parts
    assert "df" in listing.output and "DataFrame" in listing.output and "3×2" in listing.output
    assert "_hidden" not in listing.output
    assert "3 rows × 2 columns" in detail.output and "temp" in detail.output and "Lima" in detail.output


def test_sql_queries_dataframes_and_refuses_writes(make_forge, server, tmp_path):
    df = pd.DataFrame({"x": range(250)})
    (tmp_path / "t.csv").write_text("a,b\n1,2\n3,4\n")
    server.add(Turn([tool_call("sql", {"query": "SELECT count(*) AS n, sum(x) AS s FROM df"}),
                     tool_call("sql", {"query": "SELECT * FROM df"}),
                     tool_call("sql", {"query": "SELECT sum(a) AS total FROM read_csv('t.csv')"}),
                     tool_call("sql", {"query": "COPY (SELECT 1) TO 'out.csv'"}),
                     tool_call("sql", {"query": "ATTACH 'x.db'"}),
                     tool_call("sql", {"query": "SELECT * FROM read_csv('/etc/passwd')"})]),
               Turn.text("queried"))
    forge = make_forge(builtin_tools=True, namespace={"df": df}, root=tmp_path)
    os.chdir(tmp_path)
    forge.session("s").prompt("query")
    count, page, csv, copy, attach, escape = forge.session("s").messages()[1].tool_parts
    assert "250" in count.output and "31125" in count.output
    assert "showing the first 100" in page.output
    assert "4" in csv.output and csv.state == "completed"
    assert copy.state == "error" and "COPY statement" in copy.error
    assert attach.state == "error" and "ATTACH statement" in attach.error
    assert escape.state == "error"
    assert not (tmp_path / "out.csv").exists()


def test_task_runs_a_subagent_in_a_child_session(make_forge, server):
    server.add(Turn([tool_call("task", {"description": "count", "prompt": "Count to three."})]),
               Turn.text("one, two, three"),  # the child's answer
               Turn.text("The subagent counted."))
    forge = make_forge(builtin_tools=True)
    parent = forge.session("s")
    answer = parent.prompt("delegate")
    assert answer.text == "The subagent counted."
    first = parent.messages()[1]
    call = first.tool_parts[0]
    assert call.output == "one, two, three"
    subtask = [p for p in first.parts if p.type == "subtask"][0]
    child = forge.store.get_session(subtask.child_session_id)
    assert child.parent_id == parent.id and subtask.agent == "plan"
    child_tools = server.requests[1].tools
    assert "write" not in child_tools and "python" not in child_tools  # plan: read-only


def test_plugins_can_add_tools_and_rewrite_the_system_prompt(make_forge, server):
    class Plugin:
        @hookimpl
        def forge_tools(self, forge):
            def shout(text: str) -> str:
                """Uppercase text."""
                return text.upper()
            return [shout]

        @hookimpl
        def forge_system_prompt(self, system, agent, model):
            return system + "\nAlways be brief."

    server.add(Turn([tool_call("shout", {"text": "hey"})]), Turn.text("ok"))
    forge = make_forge()
    forge.plugins.register(Plugin())
    for t in forge.plugins.hook.forge_tools(forge=forge)[0]:
        forge.add_tool(t)
    forge.session("s").prompt("shout")
    assert "shout" in server.requests[0].tools
    assert server.requests[0].messages[0]["content"].endswith("Always be brief.")
    assert _last_call(forge).output == "HEY"
