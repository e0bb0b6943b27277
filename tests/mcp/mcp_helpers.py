"""Helpers of the MCP tests (the fixtures are in conftest.py)."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SERVERS = str(HERE / "mcp_servers.py")
EVIL = str(HERE / "evil_server.py")


def stdio(name: str = "t", **extra) -> dict:
    """An mcpServers entry running the test server over stdio."""
    return {name: {"command": sys.executable, "args": [SERVERS, "stdio"], **extra}}


def tool_parts(forge, session) -> list:
    forge.flush()
    return [p for m in forge.store.read_timeline(session.id) for p in m.parts if p.type == "tool"]


def alive(pid: int) -> bool:
    """Running (a zombie waiting for its parent to reap it counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
