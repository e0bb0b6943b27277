"""What many MCP tools cost each request, and what lazy tools and the lean profile save (issue
29, item 8). A real wide MCP server (tests/mcp/wide_server.py: 57 tools, ~32 KB of listing,
shaped like GitHub, filesystem, PostgreSQL, Slack, Jira, browser and calendar servers together)
is started over stdio; the build agent's tool table is then measured, side by side:

  whole          every MCP tool in every request (tool_search_tokens=0)
  lazy           the MCP tools behind tool_search (the default tool_search_tokens)
  lazy+3 loaded  after the model loaded three of them with tool_search
  lean+lazy      the lean profile, MCP tools behind tool_search
  lean whole     the lean profile, every MCP tool (shortened)

    LITELLM_LOCAL_MODEL_COST_MAP=True .venv/bin/python benchmarks/bench_mcp_tools.py

Counted offline with litellm's tokenizer for gpt-4o (tiktoken o200k), as bench_prompt_size.py
does: "tools JSON" is each tool's definition as JSON (what chat templates such as Qwen's or
Llama's put in the prompt), "request" litellm's count of the system prompt plus the table
(litellm's own estimate of a tool table, lower than its JSON). It also asks the real tool_search a few questions and prints the first match.
``--small`` measures the same (one server start; it is quick) and skips the questions.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from _small import small  # noqa: E402 — benchmarks/ is the script's folder

from forge_jupyter import Forge, llm  # noqa: E402
from forge_jupyter.session import turn  # noqa: E402
from forge_jupyter.tools.base import ToolContext  # noqa: E402
from forge_jupyter.tools.tool_search import TOOL_SEARCH  # noqa: E402

COUNTING_MODEL = "gpt-4o"
MODEL = "openai/local-model"  # unknown to litellm: the profile is what the setting says
WIDE = Path(__file__).resolve().parent.parent / "tests" / "mcp" / "wide_server.py"
LOADED = ("wide__create_issue", "wide__list_issues", "wide__add_issue_comment")
QUESTIONS = ("open a bug report on github", "post to a slack channel", "run a sql query",
             "take a screenshot of the page", "move a ticket to done")


def count(system: str, tools: list[dict[str, Any]]) -> tuple[int, int]:
    """(the tools as compact JSON, litellm's count of a system message plus the tools)."""
    with llm.counting() as lm:  # litellm's counter is off outside (llm/loading.py)
        as_json = sum(lm.token_counter(model=COUNTING_MODEL, text=json.dumps(t)) for t in tools)
        request = lm.token_counter(model=COUNTING_MODEL, tools=tools or None,
                                   messages=[{"role": "system", "content": system}])
    return as_json, request


def table(forge: Forge, sid: str, profile: str, budget: int,
          loaded: tuple[str, ...] = ()) -> dict[str, Any]:
    forge.tool_profile = profile
    forge.tool_search_tokens = budget
    forge.services.loaded_tools[sid] = set(loaded)
    session = forge.session(sid)
    agent = forge.agents.get("build")
    rules = turn.layered_permissions(forge, session.info, agent)
    return turn.tool_table(forge, MODEL, rules, session_id=session.id)


def main() -> None:
    quick = small()
    home = tempfile.mkdtemp(prefix="bench-mcp-tools-")
    os.environ["HOME"] = home  # only this server: not the person's ~/.forge/mcp.json
    forge = Forge(db=":memory:", load_plugins=False, root=home,
                  namespace={"get_ipython": lambda: None},  # the table as in a kernel
                  mcp_servers={"mcpServers": {"wide": {"command": sys.executable,
                                                       "args": [str(WIDE)]}}})
    try:
        session = forge.session("bench")
        notices = asyncio.run(forge.mcp.prepare(forge.registry))
        mcp_tools = [n for n in forge.registry.names() if n.startswith("wide__")]
        if len(mcp_tools) != 57:
            raise SystemExit(f"the wide server offered {len(mcp_tools)} tools: {notices}")
        default = forge.tool_search_tokens
        rows = [("whole", "full", 0, ()), ("lazy", "full", default, ()),
                ("lazy+3 loaded", "full", default, LOADED), ("lean+lazy", "lean", default, ()),
                ("lean whole", "lean", 0, ())]
        print(f"57 MCP tools of one wide server; tool_search_tokens={default}; counted for "
              f"{COUNTING_MODEL}\n")
        print(f"{'table':<15}{'tools':>7}{'MCP':>6}{'tools JSON':>12}{'request':>10}")
        whole = None
        for label, profile, budget, loaded in rows:
            got = table(forge, session.id, profile, budget, loaded)
            agent = forge.agents.get("build")
            system = turn.system_prompt(forge, agent, MODEL, got)
            only, request = count(system, [t.definition() for t in got.values()])
            whole = whole or only
            mcp = sum(1 for n in got if n.startswith("wide__"))
            print(f"{label:<15}{len(got):>7}{mcp:>6}{only:>12,}{request:>10,}"
                  f"   ({only / whole:.0%} of whole)")
        if not quick:
            lazy = table(forge, session.id, "full", default)[TOOL_SEARCH]
            print("\ntool_search's first match:")
            for q in QUESTIONS:
                ctx = ToolContext(session_id=session.id, message_id="m", call_id="c", part_id="p")
                out = asyncio.run(lazy.run({"query": q}, ctx)).output.splitlines()
                first = out[1].split(":", 1)[0][2:] if len(out) > 1 else "(none)"
                print(f"  {q!r:<36} → {first}")
    finally:
        forge.close()


if __name__ == "__main__":
    main()
