"""``%forge mcp`` and ``%forge skills``: what the agent can use besides the builtin tools."""

from __future__ import annotations

from typing import Any

from IPython.core.error import UsageError

from ..mcp.connection import ServerError
from ..project_files import ProjectFileRefused
from ..scrub import Scrubber
from ..tools.tool_search import estimated_tokens

RESTART_TIMEOUT = 90.0  # Supervisor.restart's own

MCP_USAGE = """\
%forge mcp                    MCP servers: state, what runs, their tools and hints
%forge mcp restart NAME       start a server again now (after it failed twice, or to reload it)
%forge mcp trust              trust the notebook folder's .forge/mcp.json as it is now
%forge mcp reload             read the MCP configuration again"""

_STATE = {
    "idle": "not started (starts with the next prompt)",
    "crashed": "crashed (starts again with its next use, once)",
    "untrusted": "not started: the project file is not trusted (%forge mcp trust)",
}


def mcp_command(forge: Any, args: list[str]) -> None:
    mcp = forge.mcp
    if not args:
        print(describe(mcp, forge))
        return
    if args[0] == "restart" and len(args) == 2:
        try:
            mcp.restart(args[1])
        except KeyError as exc:
            raise UsageError(str(exc.args[0])) from None
        except (ServerError, TimeoutError) as exc:  # it did not start: one line, what to do
            mcp.sync(forge.registry)
            raise UsageError(restart_failed(mcp, args[1], exc)) from None
        mcp.sync(forge.registry)
        print(describe(mcp, forge))
    elif args == ["trust"]:
        try:
            path = mcp.trust()
        except ProjectFileRefused as exc:  # a link: trust is for this folder's own file
            raise UsageError(str(exc)) from None
        print(f"Trusted {path}; its servers start with the next prompt." if path else
              "There is no .forge/mcp.json in this notebook's folder.")
    elif args == ["reload"]:
        mcp.reload()
        print(describe(mcp, forge))
    else:
        raise UsageError(MCP_USAGE)


def restart_failed(mcp: Any, name: str, exc: BaseException) -> str:
    """Why ``%forge mcp restart NAME`` did not start it and what to do, on one line."""
    spec = mcp.supervisor.connections[name].spec
    why = " ".join((str(exc) or f"it did not start within {RESTART_TIMEOUT:g} s").split())
    where = (f"check that the server is up at {spec.url} and that url in {spec.source} is right"
             if spec.transport == "http" else
             f"check the command ({spec.describe()[:120]}) in {spec.source} runs in a terminal")
    return Scrubber.from_environment()(f"{why[:400]} — {where}, then run %forge mcp restart "
                                       f"{name} again.") or ""


def lazy_note(mcp: Any, forge: Any) -> str | None:
    """Whether the MCP tools are offered through tool_search (a line for ``%forge mcp``)."""
    tools = [t for t in (forge.registry.get(n) for n in mcp.registered) if t is not None]
    budget = forge.tool_search_tokens
    size = estimated_tokens(tools)
    if not tools:
        return None
    if budget and size > budget:
        return (f"Lazy tools: on — the MCP tools take ~{size:,} tokens, over "
                f"Forge.tool_search_tokens ({budget:,}); the model finds and loads the ones it "
                "needs with tool_search.")
    return f"Lazy tools: off (the MCP tools take ~{size:,} tokens; tool_search_tokens: {budget:,})."


def describe(mcp: Any, forge: Any = None) -> str:
    rows = mcp.status()
    if not rows and not mcp.problems:
        return ("No MCP servers are configured. Add them to .forge/mcp.json beside the notebook, "
                "~/.forge/mcp.json, or %config Forge.mcp_servers = {...} (the mcpServers format "
                "of Claude Desktop).\n\n" + MCP_USAGE)
    lines = [f"MCP servers ({len(rows)}):"]
    for r in rows:
        state = _STATE.get(r["state"], r["state"])
        pid = f", pid {r['pid']}" if r["pid"] else ""
        lines.append(f"  {r['server']}: {state}{pid} — {r['transport']}: {r['runs'][:120]} "
                     f"({r['source']})")
        if r["error"] and r["state"] in ("crashed", "failed"):
            lines.append(f"    last error: {r['error'][:500]}")
        for t in r["tools"]:
            lines.append(f"    {t['name']:<40} {t['hints']}")
        for why in r["left_out"]:
            lines.append(f"    left out: {why}")
        if r["filtered"]:
            lines.append(f"    {r['filtered']} tool(s) left out by its tool list")
        for why in r["unmatched"]:
            lines.append(f"    problem: its tool list {why}")
    lines += [f"  problem: {p}" for p in mcp.problems]
    note = lazy_note(mcp, forge) if forge is not None else None
    if note:
        lines.append(note)
    return "\n".join(lines)


def skills_command(forge: Any, args: list[str]) -> None:
    skills = forge.skills
    if skills is None:
        print("Skills are off for this Forge (Forge(skills=False)).")
        return
    found = skills.scan()
    if not found:
        print("No skills found. A skill is a folder with a SKILL.md (front matter: name, "
              "description) under .forge/skills/ beside the notebook or ~/.forge/skills/.")
    for s in found.values():
        print(f"  {s.name:<24} {s.description[:100]} ({s.source}: {s.folder})")
    for p in skills.problems:
        print(f"  problem: {p}")
