"""``${…}`` in MCP configurations as other clients write them (mcp/variables.py): filled in one
place, and a form forge cannot fill leaves its server out with a problem saying what to do."""

from __future__ import annotations

import sys
import warnings

from forge_jupyter.mcp import McpWarning
from forge_jupyter.mcp.config import load_servers
from forge_jupyter.testing import Turn, tool_call
from tests.mcp.mcp_helpers import SERVERS, tool_parts


def test_defaults_workspace_folder_and_literals_are_filled(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SET_ONE", "given")
    monkeypatch.setenv("EMPTY_ONE", "")
    monkeypatch.delenv("UNSET_ONE", raising=False)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    entry = {"command": "mcp-server-git",
             "args": ["--repository", "${workspaceFolder}", "${UNSET_ONE:-fallback}",
                      "${env:SET_ONE:-x}", "${EMPTY_ONE:-was empty}", "$${workspaceFolder}",
                      "${workspaceFolderBasename}"],
             "env": {"A": "${SET_ONE}"}, "cwd": "${workspaceFolder}/sub"}
    specs, problems = load_servers(tmp_path / "nb", {"git": entry})
    assert problems == []
    nb = str((tmp_path / "nb").resolve())
    assert specs["git"].args == ("--repository", nb, "fallback", "given", "was empty",
                                 "${workspaceFolder}", "nb")
    assert specs["git"].env == {"A": "given"} and specs["git"].cwd == nb + "/sub"
    # In a kernel Jupyter started for a notebook: that notebook's folder.
    monkeypatch.setenv("JPY_SESSION_NAME", str(tmp_path / "elsewhere" / "a.ipynb"))
    specs, _ = load_servers(tmp_path / "nb", {"git": entry})
    assert specs["git"].args[1] == str(tmp_path / "elsewhere")


def test_input_and_unknown_forms_leave_the_server_out_saying_what_to_do(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GH_TOKEN_VALUE", "ghp_0123456789abcdefABCDEF0123456789abcd")
    specs, problems = load_servers(tmp_path, {"servers": {
        "gh": {"url": "https://x.example/mcp",
               "headers": {"Authorization": "Bearer ${GH_TOKEN_VALUE}", "X": "${input:pat}"}},
        "odd": {"command": "x", "args": ["${command:pickFile}"]},
        "fine": {"command": "x", "args": ["${GH_TOKEN_VALUE}"]}}})
    assert set(specs) == {"fine"}
    said = "\n".join(problems)
    assert "'gh'" in said and "${input:pat}" in said and "write ${env:NAME}" in said
    assert "'odd'" in said and "${command:pickFile}" in said and "forge cannot fill" in said
    assert "ghp_0123456789" not in said  # names of variables, never their values


def test_a_real_server_gets_the_notebook_folder_and_defaults(mcp_forge, server, tmp_path,
                                                             monkeypatch):
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    monkeypatch.delenv("NOT_SET_HERE", raising=False)
    monkeypatch.setenv("PYTHON_FOR_TEST", sys.executable)
    server.add(Turn([tool_call("t__whoami", {"var": "REPO_DIR"}), tool_call("t__whoami", {"var": "GREETING_MODE"})]),
               Turn.text("done"))
    forge = mcp_forge({"t": {"command": "${env:PYTHON_FOR_TEST}", "args": [SERVERS, "stdio"],
                             "env": {"REPO_DIR": "${workspaceFolder}",
                                     "GREETING_MODE": "${NOT_SET_HERE:-the default}"}}})
    s = forge.session("s")
    with warnings.catch_warnings(record=True) as heard:
        warnings.simplefilter("always")
        s.prompt("where are you")
    assert not [w for w in heard if w.category is McpWarning]  # nothing wrong: nothing said
    ws, default = tool_parts(forge, s)
    assert ws.output.endswith(f"REPO_DIR={(tmp_path / 'nb').resolve()}"), ws.output
    assert default.output.endswith("GREETING_MODE=the default"), default.output
