"""MCP tests: real servers (tests/mcp/mcp_servers.py, evil_server.py) over stdio and HTTP."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import pytest

from tests.mcp.mcp_helpers import SERVERS


@pytest.fixture
def mcp_forge(make_forge, tmp_path, monkeypatch):
    """Forges whose MCP configuration is only what the test gives (HOME is a fresh folder)."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    root = tmp_path / "nb"
    root.mkdir()

    def make(servers: dict | None = None, **kw):
        kw.setdefault("root", root)
        kw.setdefault("output_root", tmp_path / "out")
        return make_forge(mcp_servers={"mcpServers": servers or {}}, **kw)

    return make


@pytest.fixture
def http_server():
    """The test server over streamable HTTP on 127.0.0.1 at a free port: its URL."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, SERVERS, "http", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            time.sleep(0.1)
    else:
        proc.kill()
        pytest.fail("the HTTP MCP test server did not start within 60 s")
    yield f"http://127.0.0.1:{port}/mcp"
    proc.terminate()
    proc.wait(10)
