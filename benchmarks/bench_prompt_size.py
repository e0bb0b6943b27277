"""What the model reads before the person says anything: the system prompt and the tool table
(issue 12, item 15). Prints tokens per tool and in all, side by side: the recorded baseline
(benchmarks/data/prompt_baseline.json, the build agent's prompt and builtin tools before the
cut), today's full profile, and the lean profile.

    LITELLM_LOCAL_MODEL_COST_MAP=True .venv/bin/python benchmarks/bench_prompt_size.py

It also prints what a notebook adds: the ``notebook_read`` tool (offered in a kernel) and the
context note each ``%%forge`` prompt carries (notebook/cells/note.py), on notebooks/quickstart.ipynb
as its first and third ``%%forge`` cells see it, and with a failed cell before the prompt.

Counted offline with litellm's tokenizer for gpt-4o (tiktoken o200k). A tool is counted as the
compact JSON of its definition (what chat templates such as Qwen's or Llama's put in the prompt);
"request" is litellm's count of a system message plus the tool table. Local models' tokenizers
and templates differ: the same baseline measured ~2,980 tokens on a llama.cpp server.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from _small import small  # noqa: E402 — benchmarks/ is the script's folder

from forge_jupyter import Forge, llm  # noqa: E402
from forge_jupyter.session import turn  # noqa: E402

COUNTING_MODEL = "gpt-4o"
MODEL = "openai/local-model"  # unknown to litellm: the profile is what the setting says
WINDOW = 8_192  # the local model of the issue
BASELINE = Path(__file__).parent / "data" / "prompt_baseline.json"
QUICKSTART = Path(__file__).parent.parent / "notebooks" / "quickstart.ipynb"


def tokens(text: str) -> int:
    with llm.counting() as lm:  # litellm's counter is off outside (llm/loading.py)
        return lm.token_counter(model=COUNTING_MODEL, text=text)


def measure(system: str, tools: list[dict[str, Any]]) -> dict[str, Any]:
    per_tool = {t["function"]["name"]: tokens(json.dumps(t)) for t in tools}
    with llm.counting() as lm:
        request = lm.token_counter(model=COUNTING_MODEL, tools=tools or None,
                                   messages=[{"role": "system", "content": system}])
    return {"system": tokens(system), "tools": per_tool, "request": request}


def current(profile: str) -> dict[str, Any]:
    forge = Forge(db=":memory:", tool_profile=profile, load_plugins=False,
                  namespace={"get_ipython": lambda: None})  # the prompt as in a kernel
    session = forge.session("bench")
    agent = forge.agents.get("build")
    rules = turn.layered_permissions(forge, session.info, agent)
    table = turn.tool_table(forge, MODEL, rules)
    system = turn.system_prompt(forge, agent, MODEL, table)
    forge.close()
    return measure(system, [t.definition() for t in table.values()])


def notebook_tool_tokens() -> int:
    """The notebook_read tool's definition, as a kernel's %%forge offers it."""
    from forge_jupyter.tools.notebook_read import notebook_read_tool

    return tokens(json.dumps(notebook_read_tool().definition()))


def quickstart_notes() -> dict[str, int]:
    """Tokens of the context note on the quickstart notebook (Run All: each code cell before
    the prompt ran in order; ``failed``: the cell before it raised)."""
    from forge_jupyter.notebook.cells.note import SavedIndex, context_note
    from forge_jupyter.notebook.cells.run_log import RunLog, RunRecord, summarize_error
    from forge_jupyter.scrub import Scrubber

    cells = json.loads(QUICKSTART.read_text())["cells"]
    code = [c for c in cells if c["cell_type"] == "code"]
    out = {}
    forge_cells = [i for i, c in enumerate(code) if "".join(c["source"]).startswith("%%forge")]
    for label, which, fail in (("first %%forge", 0, False), ("third %%forge", 2, False),
                               ("first, after a failed cell", 0, True)):
        upto = forge_cells[which]
        log = RunLog(shell=None)
        # the turn before it: the previous %%forge cell's count (counts start at 1)
        log.last_turn_count = forge_cells[which - 1] + 1 if which else None
        for n, c in enumerate(code[:upto], start=1):
            src = "".join(c["source"])
            log.runs.append(RunRecord(n, c.get("id"), 0.0, 0.1, True, forge=src.startswith("%%forge"),
                                      source=src))
        if fail:
            try:
                {}["revenue"]  # noqa: B018 - a KeyError with a real traceback
            except KeyError as exc:
                log.runs[-1].ok, log.runs[-1].error = False, summarize_error(exc)
        cell = code[upto]
        log.runs.append(RunRecord(upto + 1, cell.get("id"), 0.0, source="".join(cell["source"]),
                                  forge=True))
        note = context_note(str(QUICKSTART), {"cell_id": cell.get("id")}, log, SavedIndex(),
                            Scrubber())
        out[label] = tokens(note)
        if os.environ.get("BENCH_SHOW_NOTE"):
            print(note)
    return out


def main() -> None:
    baseline = json.loads(BASELINE.read_text())
    columns = {"baseline": measure(baseline["system"], baseline["tools"]),
               "full": current("full"), "lean": current("lean")}
    names = list(columns["baseline"]["tools"])
    print(f"{'tokens (gpt-4o tokenizer)':<28}" + "".join(f"{c:>10}" for c in columns))
    print(f"{'system prompt':<28}" + "".join(f"{m['system']:>10}" for m in columns.values()))
    for name in names:
        cells = [m["tools"].get(name) for m in columns.values()]
        print(f"{'tool ' + name:<28}" + "".join(f"{'—' if c is None else c:>10}" for c in cells))
    sums = [m["system"] + sum(m["tools"].values()) for m in columns.values()]
    print(f"{'system + tools (JSON)':<28}" + "".join(f"{s:>10}" for s in sums))
    print(f"{'request (litellm count)':<28}" + "".join(f"{m['request']:>10}" for m in columns.values()))
    share = [m["request"] / WINDOW for m in columns.values()]
    print(f"{'share of an 8k window':<28}" + "".join(f"{s:>10.0%}" for s in share))
    base = columns["baseline"]["request"]
    for name in ("full", "lean"):
        now = columns[name]["request"]
        print(f"{name}: {now:,} tokens, {now / base:.2f}× the baseline's {base:,} "
              f"({base - now:,} fewer)")
    print(f"in a kernel: the notebook_read tool adds {notebook_tool_tokens():,} tokens to the table")
    for label, n in quickstart_notes().items():
        print(f"context note on quickstart.ipynb, {label}: {n:,} tokens per prompt")


if __name__ == "__main__":
    small()  # already small: counted offline in a second or two
    main()
