"""MCP servers' tools in the notebook agent (``forge.mcp``).

Configured servers (config.py) start lazily: when the first prompt of the Forge decides its
turn, every server that should run is started (in parallel) and its tools join the registry as
``server__tool`` (tools.py); later turns reuse the running servers. A server that crashed is
started again once, at its next use (connection.py). ``forge.mcp.status()`` (``%forge mcp``)
says what each server is doing and which tools it offers; ``Forge.close()`` and the kernel's
exit stop them all (supervisor.py).
"""

from __future__ import annotations

import os
from typing import Any

from ..scrub import Scrubber
from ..tools.registry import ToolRegistry
from .config import ServerSpec, load_servers, trust_project
from .supervisor import Supervisor
from .tools import adapt, hint_label, schema_problem, tool_name

__all__ = ["McpServers", "McpWarning", "ServerSpec", "load_servers"]


class McpWarning(UserWarning):
    """What a script would otherwise never hear of its MCP servers: one that did not start, a
    configuration problem, tools left out (a notebook shows these as the turn's notices)."""


class McpServers:
    """One Forge's MCP servers and the registry tools they add."""

    def __init__(self, root: str | os.PathLike[str], explicit: Any = None, *,
                 trust_project_file: bool = False) -> None:
        self.root = str(root)
        self._explicit = explicit
        self._trust = trust_project_file
        self.specs, self.problems = load_servers(root, explicit,
                                                 trust_project_file=trust_project_file)
        self.supervisor = Supervisor(self.specs)
        self.registered: dict[str, tuple[str, str]] = {}  # tool name → (server, remote name)
        self.skipped: dict[str, list[str]] = {}  # server → why some of its tools are left out
        self.unmatched: dict[str, list[str]] = {}  # server → tool-list entries naming no tool
        self.filtered: dict[str, int] = {}  # server → tools its tool list leaves out
        self._told: set[str] = set()  # notices already given once
        self._adapted: dict[tuple[str, int, str], Any] = {}  # (server, start, tool) → Tool

    def __bool__(self) -> bool:
        return bool(self.specs)

    async def prepare(self, registry: ToolRegistry) -> list[str]:
        """Start what should run; bring the registry's MCP tools up to date. Returns notices
        for the person (each said once: a bad configuration, a server that did not start)."""
        notices = [p for p in self.problems if p not in self._told]
        notices += await self.supervisor.start_all()
        notices += self.sync(registry)
        fresh = [n for n in notices if n not in self._told]
        self._told.update(fresh)
        return fresh

    def sync(self, registry: ToolRegistry) -> list[str]:
        """Register the running servers' tools, unregister the tools of servers that are down.
        Changes only what changed: a turn deciding its table meanwhile (another session's,
        another thread's) never sees the MCP tools missing for a moment."""
        notices: list[str] = []
        taken = set(registry.names()) - set(self.registered)
        wanted: dict[str, Any] = {}
        placed: dict[str, tuple[str, str]] = {}
        for server, conn in self.supervisor.connections.items():
            if conn.state == "untrusted":
                notices.append(conn.unavailable())
            if conn.state != "running":
                continue
            skipped = self.skipped[server] = list(conn.rejected)
            offered = conn.spec.tools
            unmatched = self.unmatched[server] = offered.unmatched(
                server, [str(t.name) for t in conn.tools]) if offered else []
            if unmatched:
                notices.append(f"MCP server {server!r} ({conn.spec.source}): "
                               + "; ".join(unmatched[:5]) + " (its tools: "
                               + ", ".join(str(t.name)[:40] for t in conn.tools[:20])
                               + (", …" if len(conn.tools) > 20 else "") + ")")
            kept = [t for t in conn.tools if offered.keeps(server, str(t.name))]
            self.filtered[server] = len(conn.tools) - len(kept)
            for listed in kept:
                name = tool_name(server, str(listed.name))
                problem = schema_problem(listed.input_schema)
                if problem is None and (name in taken or name in wanted):
                    problem = f"its name {name!r} is taken by another tool"
                if problem is not None:
                    skipped.append(f"{str(listed.name)[:64]!r}: {problem}")
                    continue
                key = (server, conn.starts, listed.name)  # the same listing: the same Tool
                tool = self._adapted.get(key)
                if tool is None or registry.get(name) is not tool:
                    tool = self._adapted[key] = adapt(self, server, listed, name, conn.spec.timeout)
                wanted[name], placed[name] = tool, (server, listed.name)
            if skipped:
                notices.append(f"MCP server {server!r}: {len(skipped)} tool(s) left out — "
                               + "; ".join(skipped[:5]))
        for name in set(self.registered) - set(wanted):
            registry.unregister(name)
        for name, tool in wanted.items():
            if registry.get(name) is not tool:
                registry.register(tool)
        self.registered = placed
        self._adapted = {k: t for k, t in self._adapted.items() if t in wanted.values()}
        return notices

    def status(self) -> list[dict[str, Any]]:
        """Each server: its state, what runs, where it was configured, its tools."""
        rows = []
        scrub = Scrubber.from_environment()  # args, errors and stderr may quote the keys
        for server, conn in self.supervisor.connections.items():
            tools = [{"name": n, "tool": remote,
                      "hints": hint_label(next((t for t in conn.tools if t.name == remote), None))}
                     for n, (s, remote) in sorted(self.registered.items()) if s == server]
            rows.append({"server": server, "state": conn.state, "transport": conn.spec.transport,
                         "runs": scrub(conn.spec.describe()), "source": conn.spec.source,
                         "pid": conn.proc.pid if conn.state == "running" else None,
                         "starts": conn.starts, "error": scrub(conn.error), "tools": tools,
                         "left_out": [scrub(w) for w in self.skipped.get(server, [])],
                         "filtered": self.filtered.get(server, 0),
                         "unmatched": self.unmatched.get(server, [])})
        return rows

    def trust(self) -> str | None:
        """Trust the project's ``.forge/mcp.json`` as it is now and reload the configuration
        (its servers start at the next prompt). Returns the trusted file's path."""
        path = trust_project(self.root)
        self.reload()
        return path

    def reload(self) -> None:
        """Read the configuration again (running servers are stopped, the next prompt starts
        them again)."""
        self.supervisor.close()
        self.specs, self.problems = load_servers(self.root, self._explicit,
                                                 trust_project_file=self._trust)
        self.supervisor = Supervisor(self.specs)
        self._told.clear()

    def configure(self, explicit: Any) -> None:
        """New ``Forge.mcp_servers``: reload when they changed (servers restart on next use)."""
        if (explicit or None) != (self._explicit or None):
            self._explicit = explicit
            self.reload()

    def restart(self, server: str) -> None:
        if server not in self.supervisor.connections:
            known = ", ".join(self.supervisor.connections) or "none configured"
            raise KeyError(f"no MCP server named {server!r} (servers: {known})")
        self.supervisor.restart(server)

    def close(self) -> None:
        self.supervisor.close()
