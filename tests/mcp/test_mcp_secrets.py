"""An MCP server's configured env, headers and key-like args are known secrets, and what
forge shows of a server — ``%forge mcp``'s listing, its notices, the server's stderr — is
scrubbed before it is shown or stored (issue 24, class 5)."""

from __future__ import annotations

import json
import sys

from forge_jupyter.mcp.config import load_servers
from forge_jupyter.notebook.mcp_magic import describe
from forge_jupyter.scrub import Scrubber
from forge_jupyter.testing import Turn

ENV_VALUE = "envOnly-7Hq2Lm9Zx"  # under a plain name: known because it is configured
HEADER = "hdr-Value-4Kp8Wn1Qs"  # a header no list names
FLAG_VALUE = "flagValue-3Jd6Rt0Yc"  # after --api-key
INLINE = "inlineVal-5Mb2Vx8Tu"  # --token=…
LOOSE = "Lq4Zr8Kp2Wx6Nt0V"  # a bare argument that looks like a key


def test_configured_env_headers_and_key_like_args_are_hidden_everywhere(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    load_servers(tmp_path, {"mcpServers": {
        "local": {"command": "server", "env": {"LOG_TARGET": ENV_VALUE, "LANG": "en_US.UTF-8"},
                  "args": ["--api-key", FLAG_VALUE, f"--token={INLINE}", LOOSE,
                           "@scope/server-files", "./data"]},
        "remote": {"url": "https://x.example/mcp", "headers": {"X-Tenant-Auth": HEADER}},
    }})
    scrub = Scrubber.from_environment()
    for value in (ENV_VALUE, HEADER, FLAG_VALUE, INLINE, LOOSE):
        assert value not in scrub(f"the server said {value}!"), value
    kept = "using @scope/server-files on ./data with en_US.UTF-8"
    assert scrub(kept) == kept


def test_a_bearer_headers_token_is_hidden_however_it_is_spaced(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    tokens = ["tokOne-6Yh3Nq8Lw", "tokTwo-1Rc7Vm4Ps", "tokThree-9Bx2Kd5Jf"]
    spellings = [f"Bearer {tokens[0]}", f"bearer  {tokens[1]}", f"Token\t{tokens[2]} "]
    load_servers(tmp_path, {"mcpServers": {
        f"h{i}": {"url": "https://x.example/mcp", "headers": {"Authorization": v}}
        for i, v in enumerate(spellings)}})
    scrub = Scrubber.from_environment()
    for token in tokens:  # the token alone, wherever it shows, not only after its scheme
        assert token not in scrub(f"it echoed {token}."), token
    # the token, not the spaced header, is the known value: no stream waits on its length
    assert not [v for v in scrub._spaced if any(t in v for t in tokens)]


CRASHES = ("import os, sys; sys.stderr.write('boot failed: key ' + os.environ['SVC_SETTING'] "
           "+ ' arg ' + sys.argv[1] + '\\n'); sys.exit(3)")
SETTING = "svcSetting-8Ty3Ui6Op"
ARG = "argSecret-2Gh5Jk8Lz"


def test_a_servers_stderr_is_scrubbed_in_its_notice_and_in_the_listing(mcp_forge, server):
    server.add(Turn.text("ok"))
    forge = mcp_forge({"boom": {"command": sys.executable, "args": ["-c", CRASHES, ARG],
                                "env": {"SVC_SETTING": SETTING}}})
    session = forge.session("s")
    session.prompt("hi")
    forge.flush()
    notices = [e.data["message"] for e in forge.store.events(session.id).items
               if e.type == "notice"]
    listing = describe(forge.mcp)
    said = json.dumps(notices) + listing
    assert "boot failed" in said  # the server's last words are still shown…
    assert SETTING not in said and ARG not in said  # …without the secrets in them
    assert "[secret:mcp-boom-SVC_SETTING]" in said
