"""MCP servers in a real kernel: configured with %config, started by the first %%forge, listed
by %forge mcp, and gone when the kernel shuts down (no orphan processes)."""

from __future__ import annotations

import json
import socket
import sys
import time
from pathlib import Path

import psutil

from forge_jupyter.testing import Turn, tool_call
from tests.notebook.nb_kernel import forge_kernel, usage_error

SERVERS = str(Path(__file__).resolve().parent.parent / "mcp" / "mcp_servers.py")


def _servers(kernel_pid: int) -> list[psutil.Process]:
    found = []
    for p in psutil.Process(kernel_pid).children(recursive=True):
        try:
            if SERVERS in p.cmdline():
                found.append(p)
        except psutil.NoSuchProcess:
            continue
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _gone(p: psutil.Process) -> bool:
    try:
        return p.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_mcp_in_a_kernel_lists_runs_and_leaves_no_orphans(model_server, tmp_path):
    model_server.clear()
    home = tmp_path / "home"
    home.mkdir()
    k = forge_kernel(model_server.openai_base, tmp_path, env={"HOME": str(home)})
    try:
        # u outlives its stdin: the kernel's own exit (not the pipe closing) must stop it.
        servers: dict = {name: {"command": sys.executable, "args": [SERVERS, mode]}
                         for name, mode in (("t", "stdio"), ("u", "stdio-stubborn"))}
        servers["h"] = {"url": f"http://127.0.0.1:{_free_port()}/mcp"}  # nothing listens there
        r = k.run(f"%config Forge.mcp_servers = {json.dumps(servers)}")
        assert r.status == "ok", r.text
        r = k.run("%forge mcp")
        assert "t: not started (starts with the next prompt)" in r.stdout, r.text
        kernel_pid = int(k.run("import os; print(os.getpid())").stdout)
        assert _servers(kernel_pid) == []  # lazy: nothing runs before the first prompt
        model_server.add(Turn([tool_call("t__whoami", {}), tool_call("u__lookup", {"key": "a"})]),
                         Turn.text("both answered"))
        r = k.run("%%forge\nask both servers")
        assert r.status == "ok" and "both answered" in r.text, r.text
        assert "alpha" in str(model_server.requests[1].messages)
        r = k.run("%forge mcp")
        assert "t: running, pid" in r.stdout and "u: running, pid" in r.stdout, r.text
        assert "t__delete_row" in r.stdout and "destructive" in r.stdout
        assert "t__touch" in r.stdout and "unknown (asks)" in r.stdout
        running = _servers(kernel_pid)
        assert len(running) == 2
        assert "Lazy tools: off" in r.stdout
        r = k.run("%forge mcp restart nope")
        assert usage_error(r) and "no MCP server named 'nope' (servers: t, u, h)" in r.stderr
        # An unreachable server: one line saying what to do, not a traceback.
        r = k.run("%forge mcp restart h")
        assert usage_error(r) and "Traceback" not in r.text, r.text
        said = r.stderr.strip().splitlines()
        assert len(said) == 1 and "MCP server 'h' could not start" in said[0], r.stderr
        assert "check that the server is up at http://127.0.0.1:" in said[0]
        assert said[0].endswith("then run %forge mcp restart h again.")
        skill = tmp_path / ".forge" / "skills" / "plots"
        skill.mkdir(parents=True)
        (skill / "SKILL.md").write_text("---\nname: plots\ndescription: Our plot style\n---\nx\n")
        r = k.run("%forge skills")
        assert "plots" in r.stdout and "Our plot style" in r.stdout, r.text
    finally:
        k.kc.stop_channels()
        k.km.shutdown_kernel(now=False)  # as Jupyter shuts a kernel down: a request, then wait
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and not all(_gone(p) for p in running):
        time.sleep(0.2)
    assert all(_gone(p) for p in running), [p.pid for p in running if not _gone(p)]
