"""webfetch (issue 18, item 3) through the real prompt path: the fake model server scripts the
calls, real litellm carries them, real HTTP servers on 127.0.0.1 answer (or must never be
reached), the store is a real DuckDB file. No network but loopback: nothing here leaves it."""

from __future__ import annotations

import ipaddress
import tracemalloc

import pytest

from forge_jupyter.session.approval import Answer
from forge_jupyter.testing import Turn, tool_call
from forge_jupyter.tools.web_address import blocked_reason, normalize_url
from forge_jupyter.tools.web_http import get
from tests.tools.web_server import BIG, WebServer, self_signed

SECRET = "sk-webfetch-test-" + "Q7x9" * 10  # a provider key in the environment: scrubbed


@pytest.fixture
def web():
    with WebServer(secret=SECRET) as srv:
        yield srv


def fetch(make_forge, server, calls, permissions=(), on_approval=None, name="s"):
    """One prompt whose model calls webfetch once per entry of ``calls`` (a URL or a dict of
    arguments), in parallel; returns the forge, the tool parts and what the model got back."""
    args = [c if isinstance(c, dict) else {"url": c} for c in calls]
    server.add(Turn([tool_call("webfetch", a) for a in args]), Turn.text("done"))
    forge = make_forge(builtin_tools=True, db="duckdb", flags=["search"],
                       permissions=list(permissions))
    if on_approval is not None:
        forge.on_approval(on_approval)
    session = forge.session(name)
    assert session.prompt("read the web").text == "done"
    parts = session.messages()[1].tool_parts
    assert [p.tool for p in parts] == ["webfetch"] * len(calls)
    sent_back = [m for m in server.requests[-1].messages if m.get("role") == "tool"]
    return forge, parts, sent_back


def allow(srv: WebServer) -> str:
    return f"webfetch:{srv.origin}/*=allow"


# ------------------------------------------------------------------ a page a rule allows


def test_page_from_a_loopback_server_a_rule_names_arrives_as_markdown(make_forge, server, web,
                                                                      monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    _, (page, data), sent = fetch(make_forge, server, [f"{web.origin}/page", f"{web.origin}/json"],
                                  [allow(web)])
    assert page.state == "completed", page.error
    assert "# Hello from loopback" in page.output
    assert f"[a link]({web.origin}/docs/x)" in page.output  # made absolute
    assert "A **bold** claim" in page.output and "- one\n- two" in page.output
    assert "SCRIPT-TEXT" not in page.output and "color:red" not in page.output
    assert "Title: Loopback page" in page.output
    assert web.seen[:1] == [("/page", f"127.0.0.1:{web.port}")] or \
        ("/page", f"127.0.0.1:{web.port}") in web.seen
    assert data.state == "completed" and '"answer": 42' in data.output
    assert SECRET not in data.output  # scrubbed like every tool's output
    assert [m["content"] for m in sent] == [page.output, data.output]  # what the model read


def test_text_and_html_formats(make_forge, server, web):
    _, (text, html), _ = fetch(make_forge, server, [
        {"url": f"{web.origin}/page", "format": "text"},
        {"url": f"{web.origin}/page", "format": "html"}], [allow(web)])
    assert "Hello from loopback" in text.output and "# Hello" not in text.output
    assert "**" not in text.output and "A bold claim and a link." in text.output
    assert "<h1>Hello from loopback</h1>" in html.output  # raw, as the server sent it


# ------------------------------------------------------------------ refused addresses

REFUSED_SPELLINGS = [
    "http://127.1:{p}/json", "http://2130706433:{p}/json", "http://0x7f.0.0.1:{p}/json",
    "http://0177.0.0.1:{p}/json", "http://0x7f000001:{p}/json", "http://127.0.0.1.:{p}/json",
    "http://[::1]:{p}/json", "http://[::ffff:127.0.0.1]:{p}/json", "http://[::ffff:7f00:1]:{p}/json",
    "http://[::127.0.0.1]:{p}/json", "http://[2002:7f00:1::]:{p}/json",
    "http://[64:ff9b::7f00:1]:{p}/json", "http://localhost:{p}/json", "http://localhost.:{p}/json",
    "http://LOCALHOST:{p}/json", "http://api.localhost:{p}/json", "http://0:{p}/json",
    "http://0.0.0.0:{p}/json", "http://[::]:{p}/json", "HTTP://127.0.0.1:{p}/json",
    "http://\uff11\uff12\uff17.\uff10.\uff10.\uff11:{p}/json",  # fullwidth digits
    "http://example.com@127.0.0.1:{p}/json", "http://127.0.0.1:{p}\\@example.com/json",
    "http://127%2e0%2e0%2e1:{p}/json", "http://169.254.169.254/latest/meta-data/",
    "http://10.0.0.1/", "http://172.16.5.4/", "http://192.168.1.1/", "http://100.64.0.1/",
    "http://[fd00::1]/", "http://[fe80::1]/", "http://224.0.0.1/", "http://[ff02::1]/",
    "file:///etc/passwd", "ftp://127.0.0.1:{p}/", "gopher://127.0.0.1:{p}/_GET", "data:text/plain,hi",
    "javascript:alert(1)", "//127.0.0.1:{p}/json", "127.0.0.1:{p}/json",
    "http://[::1:{p}/json", "http://[fe80::1%25lo]:{p}/json", "http://[v1.x]:{p}/json",
    "http://127.0.0.1:99999/json", "http://:{p}/json", "http://%31%32%37.0.0.1:{p}/json",
]


def test_private_and_loopback_spellings_are_refused_without_a_rule_naming_them(
        make_forge, server, web):
    urls = [u.format(p=web.port) for u in REFUSED_SPELLINGS]
    # a blanket allow lets every public URL through, and no private one; in prompts of at
    # most 32 calls (the per-step cap)
    parts = []
    for i in range(0, len(urls), 32):
        parts += fetch(make_forge, server, urls[i:i + 32], ["webfetch:*=allow"], name=f"s{i}")[1]
    for url, part in zip(urls, parts, strict=True):
        assert part.state == "error", (url, part.output)
        assert part.error.startswith(("Refused", "Permission denied")), (url, part.error)
    assert web.seen == []  # not one request reached the server


def test_a_rule_naming_the_origin_opens_its_spellings_and_nothing_else(make_forge, server, web):
    other = WebServer()
    with other:
        ok = [f"http://127.1:{web.port}/json", f"http://2130706433:{web.port}/json",
              f"http://0x7f.0.0.1:{web.port}/json", f"http://0177.0.0.1:{web.port}/json",
              f"HTTP://127.0.0.1:{web.port}/json#frag"]
        refused = [f"http://localhost:{web.port}/json", f"http://[::ffff:127.0.0.1]:{web.port}/json",
                   f"http://127.0.0.1:{other.port}/json"]
        wildcard = ["webfetch:http://127.0.0.1*=allow", "webfetch:http://*=allow"]
        _, parts, _ = fetch(make_forge, server, ok + refused, [allow(web), *wildcard])
        assert [p.state for p in parts] == ["completed"] * len(ok) + ["error"] * len(refused)
        assert all(p.error.startswith("Refused") for p in parts[len(ok):])
        assert len(web.seen) == len(ok) and other.seen == []
        assert {p.metadata["final_url"] for p in parts[:len(ok)]} == {f"{web.origin}/json"}


@pytest.mark.parametrize(("raw", "normal"), [
    ("HTTP://Example.COM./a b?q=1#x", None),  # a space: refused
    ("https://Docs.Python.org:443/3/", "https://docs.python.org/3/"),
    ("http://127.1:80/", "http://127.0.0.1/"),
    ("http://[0:0:0:0:0:0:0:1]:8080/x?y", "http://[::1]:8080/x?y"),
    ("https://bücher.example/ä", "https://xn--bcher-kva.example/%C3%A4"),
])
def test_urls_have_one_spelling_for_rules(raw, normal):
    if normal is None:
        with pytest.raises(Exception, match="spaces or control"):
            normalize_url(raw)
    else:
        assert str(normalize_url(raw)) == normal


@pytest.mark.parametrize("address", ["127.0.0.1", "10.1.2.3", "169.254.169.254", "100.100.0.1",
                                     "0.0.0.0", "224.0.0.251", "255.255.255.255", "::1", "::",
                                     "fc00::1", "fd12::1", "fe80::1", "fec0::1", "ff05::2",
                                     "::ffff:10.0.0.1", "::10.0.0.1", "2002:a00:1::",
                                     "2002:a9fe:a9fe::", "64:ff9b::a9fe:a9fe", "64:ff9b:1::1",
                                     "2001:db8::1", "192.0.2.1"])
def test_non_public_addresses_are_named_as_such(address):
    assert blocked_reason(ipaddress.ip_address(address)) is not None


@pytest.mark.parametrize("address", ["8.8.8.8", "151.101.0.223", "2606:4700::1111",
                                     "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::"])
def test_public_addresses_pass(address):
    assert blocked_reason(ipaddress.ip_address(address)) is None


# ------------------------------------------------------------------ bounded in size and time


def test_a_100_mb_body_is_cut_while_streaming_in_bounded_memory(make_forge, server, web):
    tracemalloc.start()
    try:
        _, (part,), sent = fetch(make_forge, server, [f"{web.origin}/big"], [allow(web)])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert part.state == "completed", part.error
    assert "Cut: only the first 5.0 MB of 100.0 MB of the page was downloaded" in part.output
    assert part.metadata["cut"] is True and part.metadata["bytes"] == 5 * 1024 * 1024
    assert part.metadata["truncated"]["saved"]  # what the model sees is cut again, saved whole
    assert web.big_sent < BIG // 4  # the server was stopped early, not drained
    assert peak < 80 * 1024 * 1024, f"peak {peak / 2**20:.0f} MB"
    assert "Cut: only the first" in sent[0]["content"]


def test_a_slow_or_silent_server_times_out(make_forge, server, web):
    _, (slow, silent), _ = fetch(make_forge, server, [
        {"url": f"{web.origin}/slow", "timeout": 1.5},
        {"url": f"{web.origin}/silent?s=20", "timeout": 1}], [allow(web)])
    assert slow.state == silent.state == "error"
    assert "did not answer in full within 1.5 s" in slow.error
    assert "did not answer in full within 1 s" in silent.error


def test_binary_answers_are_refused_and_compressed_ones_bounded(make_forge, server, web):
    _, (png, octets, gz, bomb), _ = fetch(make_forge, server, [
        f"{web.origin}/png", f"{web.origin}/octets", f"{web.origin}/gzip", f"{web.origin}/bomb"],
        [allow(web)])
    assert png.state == "error" and "image/png" in png.error and "not text" in png.error
    assert octets.state == "error" and "binary" in octets.error
    assert gz.state == "completed" and "compressed words" in gz.output
    assert bomb.state == "completed" and bomb.metadata["cut"] is True
    assert bomb.metadata["bytes"] == 5 * 1024 * 1024


def test_https_verifies_the_certificate_for_the_urls_host(make_forge, server, tmp_path,
                                                           monkeypatch):
    cert, key = self_signed(tmp_path)
    with WebServer(tls=(cert, key)) as tls:
        rule = f"webfetch:{tls.origin}/*=allow"
        _, (untrusted,), _ = fetch(make_forge, server, [f"{tls.origin}/page"], [rule])
        assert untrusted.state == "error" and "certificate" in untrusted.error
        assert tls.seen == []  # no request left before the handshake failed
        monkeypatch.setenv("SSL_CERT_FILE", cert)  # now the machine trusts it
        _, (trusted,), _ = fetch(make_forge, server, [f"{tls.origin}/page"], [rule], name="s2")
        assert trusted.state == "completed", trusted.error
        assert "# Hello from loopback" in trusted.output
        assert tls.seen == [("/page", f"127.0.0.1:{tls.port}")]


# ------------------------------------------------------------------ redirects


def test_every_redirect_hop_is_checked_again(make_forge, server, web):
    other = WebServer()
    with other:
        hop = f"{web.origin}/redirect?to="
        _, parts, _ = fetch(make_forge, server, [
            hop + "/page", hop + f"http://127.0.0.1:{other.port}/json",
            hop + f"http://localhost:{other.port}/json", hop + "http://169.254.169.254/",
            hop + f"http://[::ffff:7f00:1]:{other.port}/", hop + "file:///etc/passwd",
            f"{web.origin}/loop"], [allow(web)])
        same, *refused, loop = parts
        assert same.state == "completed" and f"Redirected from: {hop}/page" in same.output
        for part in refused:
            assert part.state == "error", part.output
            assert "Refused" in part.error or "does not follow" in part.error, part.error
        assert loop.state == "error" and "more than 5 redirects" in loop.error
        assert other.seen == []


def test_a_pinned_connection_never_looks_the_name_up_again(web):
    """DNS rebinding: the connection goes to the address that was checked; the host name only
    travels in the Host header (this one resolves nowhere)."""
    import asyncio

    from forge_jupyter.tools.web_address import Url

    url = Url("http", "rebind.invalid", web.port, "/json", None)
    response = asyncio.run(get(url, [ipaddress.ip_address("127.0.0.1")], connect_timeout=5,
                               max_bytes=1000))
    assert response.status == 200 and response.address == "127.0.0.1"
    assert web.seen == [("/json", f"rebind.invalid:{web.port}")]


# ------------------------------------------------------------------ asking the person


def test_webfetch_asks_by_default_with_the_normalized_url(make_forge, server, web):
    asked = []
    rule = f"webfetch:{web.origin}/*=ask"  # a private host, reachable, asked about each time
    forge, (part,), _ = fetch(make_forge, server, [f"HTTP://127.1:{web.port}/page#top"], [rule],
                              on_approval=lambda r: (asked.append(r.subject), "once")[1])
    assert asked == [f"{web.origin}/page"]
    assert part.state == "completed" and "# Hello from loopback" in part.output
    kinds = [k for k in forge.events()["type"].tolist() if k.startswith("permission.")]
    assert kinds == ["permission.asked", "permission.answered"]


def test_an_approval_alone_does_not_open_a_private_address(make_forge, server, web):
    asked = []
    _, (part,), _ = fetch(make_forge, server, [f"{web.origin}/page"],
                          on_approval=lambda r: (asked.append(r.subject), "once")[1])
    assert asked == [f"{web.origin}/page"]  # the default is ask ...
    assert part.state == "error" and part.error.startswith("Refused")  # ... and no rule names it
    assert web.seen == []


def test_webfetch_denied_or_unanswered_never_reaches_the_server(make_forge, server, web):
    rule = f"webfetch:{web.origin}/*=ask"
    _, (denied,), _ = fetch(make_forge, server, [f"{web.origin}/page"], [rule],
                            on_approval=lambda r: Answer("deny", "not today", "bob"))
    assert denied.state == "error" and "not today" in denied.error
    _, (nobody,), _ = fetch(make_forge, server, [f"{web.origin}/page"], [rule], name="s2")
    assert nobody.state == "error" and "approval" in nobody.error
    assert web.seen == []
