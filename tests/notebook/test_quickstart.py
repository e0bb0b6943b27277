"""The README's main job: notebooks/quickstart.ipynb runs end to end on the offline demo model,
and what a newcomer reads in it is real: tool results computed from the notebook's own
DataFrame, and answers that quote them."""

from __future__ import annotations

import html
import os
import re
import sys
from pathlib import Path
from typing import Any

import nbformat
import pandas as pd
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]
PROVIDER_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "MISTRAL_API_KEY",
                 "DEEPSEEK_API_KEY", "GROQ_API_KEY", "OPENROUTER_API_KEY", "XAI_API_KEY")


def seen(outputs: list[Any]) -> str:
    """What a reader sees in these outputs, as plain text (HTML tags and Markdown marks gone)."""
    out = []
    for o in outputs:
        out.append(o.get("text", ""))
        data = o.get("data", {})
        out += [data.get(kind, "") for kind in ("text/markdown", "text/html", "text/plain")]
    text = html.unescape(re.sub(r"<[^>]+>", "", "\n".join(out)))
    return text.replace("**", "").replace("`", "")


def value_of(cell: Any) -> str:
    """The cell's value (Out[n]): the finished assistant message."""
    return seen([o for o in cell.outputs if o.output_type == "execute_result"])


def test_quickstart_runs_on_the_offline_demo_model(tmp_path, monkeypatch):
    for key in PROVIDER_KEYS + ("FORGE_MODEL", "FORGE_API_BASE", "FORGE_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("FORGE_DB", str(tmp_path / "quickstart.duckdb"))
    nb = nbformat.read(ROOT / "notebooks" / "quickstart.ipynb", as_version=4)
    client = NotebookClient(nb, timeout=180, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}})
    client.km = client.create_kernel_manager()
    client.km.kernel_spec.argv[0] = sys.executable  # this environment's Python
    client.execute(env=dict(os.environ))  # raises CellExecutionError on any error

    # The truth, from the notebook's own data cell.
    data_cell = next(c for c in nb.cells if c.cell_type == "code" and "sales = pd.DataFrame" in c.source)
    namespace: dict[str, Any] = {}
    exec(data_cell.source, namespace)
    sales: pd.DataFrame = namespace["sales"]
    missing = sales.isna().sum()
    totals = sales.groupby("region")["revenue"].sum().sort_values(ascending=False)

    forge_cells = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith("%%forge")]
    assert len(forge_cells) == 3
    # No output that shows nothing (nbconvert warns about each): a turn no view showed leaves
    # its record, not an emptied live display beside it.
    assert [o for c in forge_cells for o in c.outputs
            if o.output_type == "display_data" and not o.get("data")] == []
    first, follow_up, chart = forge_cells

    # 1. Missing values: `variables` then `sql`, the result table, an answer quoting it.
    shown = seen(first.outputs)
    assert "offline demo model" in shown and "OPENAI_API_KEY" in shown
    assert re.search(r"\bvariables\b\]? completed", shown) and re.search(r"\bsql\b\]? completed", shown)
    assert "count(*) - count(\"revenue\")" in shown  # the query, with its arguments
    for column, n in missing.items():
        assert re.search(rf"^\s*{column}\s+{n}\s*$", shown, re.MULTILINE), column  # the result
    answer = value_of(first)
    assert answer.strip().startswith("I'm the offline demo model")
    with_missing = [c for c, n in missing.items() if n]
    assert with_missing == ["revenue"]
    assert f"revenue has {missing['revenue']}" in answer and "region and month have none" in answer
    # Read once: the streamed lines gave way to the record when the turn ended (nbconvert
    # shows every output a cell keeps; before, the answer was there twice).
    assert shown.count(f"revenue has {missing['revenue']}") == 1
    assert "Loading the model client" not in shown

    # 2. The follow-up knows `sales` already: one `sql` call, the ranking, the leader named.
    shown = seen(follow_up.outputs)
    assert re.search(r"\bsql\b\]? completed", shown)
    assert not re.search(r"\bvariables\b\]? completed", shown)
    for region, total in totals.items():
        assert re.search(rf"^\s*{region}\s+{total:.2f}\s*$", shown, re.MULTILINE), region
    said = re.search(r"the highest region is (\w+) with ([\d.]+)", value_of(follow_up))
    assert said and (said[1], float(said[2])) == (totals.index[0], totals.iloc[0])

    # 3. The chart: `python` asks, the notebook's handler answers, the plot is in the record.
    shown = seen(chart.outputs)
    answered = next(c for c in nb.cells if c.cell_type == "code" and c.source.startswith("stop_answering()"))
    assert seen(answered.outputs).strip() == "[('python', 'once')]"  # asked once, allowed once
    # headless, no one could click: the fallback handler decided, and the record says so
    assert "Allowed once by answer_approvals" in shown and "by you" not in shown
    assert re.search(r"\bpython\b\]? completed", shown)
    assert any("data:image/png" in o.get("data", {}).get("text/html", "") or "image/png" in o.get("data", {})
               for o in chart.outputs)
    said = re.search(r"(\w+) is highest with ([\d.]+)", value_of(chart))
    assert said and (said[1], float(said[2])) == (totals.index[0], totals.iloc[0])

    fork = next(c for c in nb.cells if c.cell_type == "code" and c.source == "%forge fork")
    assert re.search(r"Forked( “[^”]*\(fork\)”)? into session ses_…", seen(fork.outputs))
    sessions = next(c for c in nb.cells if "forge.sessions()" in c.source)
    assert "text/html" in sessions.outputs[0]["data"]  # a DataFrame
    calls = next(c for c in nb.cells if "forge.tool_calls()" in c.source)
    table = seen(calls.outputs)
    assert table.count("completed") >= 4 and "python" in table and "sql" in table
