"""A script (the Python API, no kernel, no widget) hears of an MCP server that did not start."""

from __future__ import annotations

import sys

import pytest

from forge_jupyter.mcp import McpWarning
from forge_jupyter.testing import Turn


def test_a_server_that_fails_to_start_is_a_warning_naming_it_and_why(mcp_forge, server):
    server.add(Turn.text("went on without it"))
    forge = mcp_forge({"broken": {"command": sys.executable,
                                  "args": ["-c", "import sys; print('no such db', file=sys.stderr); "
                                                 "sys.exit(3)"]}})
    with pytest.warns(McpWarning, match=r"MCP server 'broken' could not start: .*no such db"):
        assert forge.session("s").prompt("hi").text == "went on without it"
