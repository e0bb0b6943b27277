"""MCP configuration: the mcpServers files people already have, merged; names, variables,
secrets; a project file runs nothing until the person trusts its exact content."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from forge_jupyter.mcp.config import load_servers, server_name
from forge_jupyter.scrub import Scrubber
from forge_jupyter.testing import Turn, tool_call
from tests.mcp.mcp_helpers import EVIL, SERVERS, tool_parts


def write(path, servers: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers}))


def test_user_then_project_then_explicit_win_by_name(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    write(tmp_path / "home" / ".forge" / "mcp.json", {"a": {"command": "user-a"},
                                                      "b": {"command": "user-b"}})
    write(tmp_path / "nb" / ".forge" / "mcp.json", {"b": {"command": "project-b"},
                                                    "c": {"url": "http://127.0.0.1:1/mcp"}})
    specs, problems = load_servers(tmp_path / "nb", {"c": {"command": "mine-c"}})
    assert problems == []
    assert {n: s.command for n, s in specs.items()} == {"a": "user-a", "b": "project-b",
                                                       "c": "mine-c"}
    assert specs["a"].trusted and not specs["b"].trusted  # the project file: not yet trusted


def test_names_formats_and_mistakes(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("MY_TOKEN_VALUE", "ghp_0123456789abcdefABCDEF0123456789abcd")
    assert server_name("GitHub MCP (work)") == "GitHub_MCP_work"
    assert server_name("a__b") == "a_b" and server_name("../..") == "" and server_name("é") == ""
    specs, problems = load_servers(tmp_path, {"servers": {  # the VS Code spelling
        "My Server!": {"command": ["npx", "-y", "pkg"], "environment": {"A": "1"}},  # opencode
        "remote": {"type": "http", "url": "https://x.example/mcp",
                   "headers": {"Authorization": "Bearer ${env:MY_TOKEN_VALUE}"}},
        "old": {"type": "sse", "url": "https://x.example/sse"},
        "nothing": {"args": ["x"]},
        "../..": {"command": "x"},
        "slow": {"command": "x", "timeout": "soon"},
        "off": {"command": "x", "disabled": True},
        "unset": {"command": "x", "env": {"K": "${NOT_SET_ANYWHERE}"}},
    }})
    assert specs["My_Server"].command == "npx" and specs["My_Server"].args == ("-y", "pkg")
    assert specs["remote"].headers["Authorization"].endswith("abcd")
    assert specs["off"].disabled and specs["unset"].env == {"K": ""}
    named_mcp, _ = load_servers(tmp_path, {"mcp": {"command": "x"}})  # a server named "mcp"
    assert named_mcp["mcp"].command == "x"
    said = "\n".join(problems)
    for why in ("SSE transport is not supported", "needs a command", "no letters or digits",
                "timeout must be a number", "NOT_SET_ANYWHERE"):
        assert why in said, why
    # A header's token is a secret from now on: scrubbed wherever it would be shown.
    assert "ghp_0123456789abcdef" not in Scrubber.from_environment()("echo ghp_0123456789abcdefABCDEF0123456789abcd")
    assert "ABCDEF0123" not in specs["remote"].describe()


def test_a_project_file_runs_nothing_until_trusted(mcp_forge, server, tmp_path):
    write(tmp_path / "nb" / ".forge" / "mcp.json",
          {"proj": {"command": sys.executable, "args": [SERVERS, "stdio"]}})
    server.add(Turn.text("nothing"), Turn([tool_call("proj__lookup", {"key": "a"})]),
               Turn.text("ok"))
    forge = mcp_forge()
    s = forge.session("s")
    s.prompt("hi")
    assert server.requests[0].tools == [] and forge.mcp.status()[0]["state"] == "untrusted"
    assert forge.mcp.trust() == str((tmp_path / "nb" / ".forge" / "mcp.json").resolve())
    s.prompt("now")
    assert tool_parts(forge, s)[0].output == "alpha"
    # Changed after it was trusted: untrusted again.
    write(tmp_path / "nb" / ".forge" / "mcp.json",
          {"proj": {"command": sys.executable, "args": [SERVERS, "stdio", "other"]}})
    forge.mcp.reload()
    assert forge.mcp.status()[0]["state"] == "untrusted"


def test_the_documented_own_environment_example_loads(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    docs = (Path(__file__).resolve().parents[2] / "docs" / "mcp-and-skills.md").read_text()
    block = next(b for b in re.findall(r"```json\n(.*?)```", docs, re.S) if "sqlite-venv" in b)
    specs, problems = load_servers(tmp_path, json.loads(block))
    assert problems == []
    db = f"{tmp_path.resolve()}/data.db"
    assert (specs["sqlite"].command, specs["sqlite"].args) == (
        "uvx", ("mcp-server-sqlite", "--db-path", db))
    assert specs["sqlite-venv"].command.endswith("/bin/python")
    assert specs["sqlite-venv"].args[-1] == db


def test_a_server_in_another_python_environment_runs(mcp_forge, server):
    """The venv's base interpreter has none of forge's packages (no mcp): the server only
    speaks JSON-RPC over stdio, so it needs none of them."""
    other = shutil.which("python3", path=os.path.join(sys.base_prefix, "bin"))
    assert other is not None and sys.prefix != sys.base_prefix  # the tests run in a venv
    assert subprocess.run([other, "-c", "import mcp"], capture_output=True).returncode != 0
    server.add(Turn.text("ok"))
    forge = mcp_forge({"other": {"command": other, "args": [EVIL]}})
    forge.session("s").prompt("hi")
    row = forge.mcp.status()[0]
    assert row["state"] == "running" and "other__blobs" in {t["name"] for t in row["tools"]}
