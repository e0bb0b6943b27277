"""``%forge mcp`` and ``%forge skills``: what the agent can use besides the builtin tools."""

from __future__ import annotations

from typing import Any

from IPython.core.error import UsageError

from ..project_files import ProjectFileRefused

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
        print(describe(mcp))
        return
    if args[0] == "restart" and len(args) == 2:
        try:
            mcp.restart(args[1])
        except KeyError as exc:
            raise UsageError(str(exc.args[0])) from None
        mcp.sync(forge.registry)
        print(describe(mcp))
    elif args == ["trust"]:
        try:
            path = mcp.trust()
        except ProjectFileRefused as exc:  # a link: trust is for this folder's own file
            raise UsageError(str(exc)) from None
        print(f"Trusted {path}; its servers start with the next prompt." if path else
              "There is no .forge/mcp.json in this notebook's folder.")
    elif args == ["reload"]:
        mcp.reload()
        print(describe(mcp))
    else:
        raise UsageError(MCP_USAGE)


def describe(mcp: Any) -> str:
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
    lines += [f"  problem: {p}" for p in mcp.problems]
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
