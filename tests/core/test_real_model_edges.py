"""What a real local server behind an OpenAI-compatible endpoint showed (issue 12, items 13-14):
a key-less server at ``api_base`` gets a placeholder key that is never stored nor shown; a
missing or refused key is never retried and says what to set; a reply cut off at the output
limit is marked, ends the run, and ``max_tokens`` reaches the request.

Real litellm over HTTP to the fake model server, real DuckDB files.
"""

from __future__ import annotations

import http.server
import json
import math
import os
import socket
import threading
import time

import pytest

from forge_jupyter import Forge
from forge_jupyter.config import Forge as ForgeConfig
from forge_jupyter.errors import InvalidOption
from forge_jupyter.model_choice import PLACEHOLDER_KEY
from forge_jupyter.render import message_html, message_text
from forge_jupyter.session.retry import RetryPolicy
from forge_jupyter.testing import Turn, http_error, text, tool_call

FAST_RETRY = RetryPolicy(max_attempts=4, base_delay=0.01, max_delay=0.05)
KEY_VARIABLES = ("FORGE_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_ADMIN_KEY")


@pytest.fixture
def no_keys(monkeypatch):
    """An environment with no provider key and no FORGE_API_KEY, as on a fresh laptop."""
    for name in list(os.environ):
        if name.endswith("_API_KEY") or name in KEY_VARIABLES:
            monkeypatch.delenv(name)
    for name in ("FORGE_API_BASE", "FORGE_MODEL", "FORGE_MAX_TOKENS", "FORGE_TOOL_PROFILE"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def forges(tmp_path):
    made: list[Forge] = []

    def make(**kw) -> Forge:
        kw.setdefault("retry", FAST_RETRY)
        kw.setdefault("builtin_tools", False)
        forge = Forge(db=str(tmp_path / f"forge{len(made)}.duckdb"), **kw)
        made.append(forge)
        return forge

    yield make
    for f in made:
        f.close()


def stored_everything(forge: Forge) -> str:
    """Every row of every table of the store, as one string."""
    return "\n".join(forge.sql(f"SELECT * FROM {table}").to_json(date_format="iso")
                     for table in ("session", "message", "part", "session_message", "event"))


def authorization(server) -> list[str | None]:
    return [r.headers.get("authorization") or r.headers.get("x-api-key") for r in server.requests]


# ------------------------------------------------------------------------------ 13: keys


def test_a_keyless_server_at_api_base_gets_a_placeholder_never_stored_nor_shown(
        no_keys, forges, server):
    server.add(Turn.text("Hello from a local model."))
    forge = forges(model="openai/local-model", api_base=server.openai_base)
    answer = forge.session("s").prompt("hi")
    assert answer.status == "completed" and answer.text == "Hello from a local model."
    assert authorization(server) == [f"Bearer {PLACEHOLDER_KEY}"]
    assert [p for p in answer.parts if p.type == "retry"] == []
    assert PLACEHOLDER_KEY not in stored_everything(forge)
    assert PLACEHOLDER_KEY not in message_text(answer) + message_html(answer) + repr(answer)


def test_the_notebook_settings_reach_a_keyless_server_the_same_way(no_keys, monkeypatch,
                                                                    tmp_path, server):
    monkeypatch.setenv("FORGE_API_BASE", server.openai_base)
    monkeypatch.setenv("FORGE_MODEL", "openai/local-model")
    monkeypatch.setenv("FORGE_DB", str(tmp_path / "f.duckdb"))
    server.add(Turn.text("configured"))
    kwargs = ForgeConfig().forge_kwargs()
    assert "api_key" not in kwargs  # nothing configured: the placeholder is added per request
    with Forge(**{**kwargs, "builtin_tools": False}) as forge:
        assert forge.session("s").prompt("hi").text == "configured"
        assert PLACEHOLDER_KEY not in stored_everything(forge)
    assert authorization(server) == [f"Bearer {PLACEHOLDER_KEY}"]


def test_forge_api_key_or_the_providers_own_variable_wins_over_the_placeholder(
        no_keys, monkeypatch, forges, server):
    server.add(Turn.text("one"), Turn.text("two"))
    monkeypatch.setenv("FORGE_API_KEY", "sk-local-server-key-1")
    forges(model="openai/local-model", api_base=server.openai_base).session("a").prompt("hi")
    monkeypatch.delenv("FORGE_API_KEY")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-proxy-key-in-env-2")  # e.g. a proxy wants it
    forges(model="openai/local-model", api_base=server.openai_base).session("b").prompt("hi")
    assert authorization(server) == ["Bearer sk-local-server-key-1", "Bearer sk-proxy-key-in-env-2"]


REFUSALS = [
    pytest.param(401, "Incorrect API key provided: sk-forg*********eded.", id="401"),
    pytest.param(403, "Your key may not use this model.", id="403"),
    # a proxy passing litellm's own words on as a 500: read first, never retried
    pytest.param(500, "Missing credentials. Please pass an `api_key`, or set the "
                      "`OPENAI_API_KEY` environment variable.", id="500-missing-credentials"),
]


@pytest.mark.parametrize(("status", "words"), REFUSALS)
def test_a_server_that_wants_a_key_is_asked_once_and_the_error_says_what_to_set(
        no_keys, forges, server, status, words):
    server.add(*[http_error(status, words)] * 5)
    forge = forges(model="openai/local-model", api_base=server.openai_base)
    answer = forge.session("s").prompt("hi")
    assert len(server.requests) == 1 and server.remaining == 4  # never retried
    assert [p for p in answer.parts if p.type == "retry"] == []
    assert answer.status == "error"
    reason = answer.error.message
    assert "wants an API key and none is set" in reason
    assert "Set FORGE_API_KEY" in reason and "OPENAI_API_KEY" in reason
    assert words.split(":")[0] in reason  # the server's own words are kept
    assert PLACEHOLDER_KEY not in stored_everything(forge)


def test_a_refused_configured_key_says_which_one_to_check(no_keys, monkeypatch, forges, server):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-revoked-key-0000")
    server.add(*[http_error(401, "Incorrect API key provided.")] * 3)
    answer = forges(model="openai/gpt-4o-mini", api_base=server.openai_base).session("s").prompt("q")
    assert len(server.requests) == 1
    assert "refused the API key (HTTP 401: Incorrect API key provided.)" in answer.error.message
    assert "OPENAI_API_KEY" in answer.error.message


def test_an_anthropic_key_refused_names_the_anthropic_variable(no_keys, forges, server):
    server.add(*[http_error(401, "invalid x-api-key")] * 3)
    forge = forges(model="anthropic/claude-sonnet-4-5", api_base=server.anthropic_base,
                   api_key="sk-ant-wrong-key")
    answer = forge.session("s").prompt("q")
    assert len(server.requests) == 1 and answer.status == "error"
    assert "invalid x-api-key" in answer.error.message
    assert "Forge(api_key=…)" in answer.error.message and "ANTHROPIC_API_KEY" in answer.error.message


@pytest.mark.parametrize(("model", "variable"), [("openai/gpt-4o-mini", "OPENAI_API_KEY"),
                                                 ("anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY")])
def test_no_key_at_all_fails_at_once_and_names_the_variable(no_keys, forges, server, model,
                                                            variable):
    # No api_base and no key: litellm refuses before sending anything (openai: "Missing
    # credentials" as HTTP 500, which was retried five times).
    forge = forges(model=model)
    started = time.monotonic()
    answer = forge.session("s").prompt("q")
    assert time.monotonic() - started < 10
    assert [p for p in answer.parts if p.type == "retry"] == []
    assert answer.status == "error"
    reason = answer.error.message
    assert reason.startswith(f"no API key for {model}: nothing was sent")
    assert f"Set {variable}" in reason and "Forge.api_base (FORGE_API_BASE)" in reason
    assert server.requests == []


def test_api_base_without_a_model_uses_the_model_that_server_lists(no_keys, forges, server):
    """Before, api_base with no model picked the offline demo model, whose own address
    replaced the person's: the prompt never reached the server they configured."""
    server.add(Turn.text("Hello from the listed model."))
    forge = forges(api_base=server.openai_base)
    answer = forge.session("s").prompt("hi")
    assert answer.text == "Hello from the listed model." and answer.model == "openai/fake-model"
    assert [r.body["model"] for r in server.requests] == ["fake-model"]  # GET /models aside
    assert any("the model the server at Forge.api_base lists" in n
               for n in forge.events(type="notice")["data"].astype(str))


class _Listing(http.server.BaseHTTPRequestHandler):
    """A server at api_base whose GET /models answers with what the test gives it."""

    body = b""

    def do_GET(self):  # noqa: N802 - stdlib naming
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args):
        pass


@pytest.mark.parametrize("listing", [
    b"not json", b"{}", b'{"data": []}', b'{"data": [{"id": ""}]}', b'{"data": [{"id": 7}]}',
    b'{"data": ["gpt"]}', b'{"data": [{"id": "a model"}]}', b'{"data": [{"id": "x\\ny"}]}',
    b'{"data": [{"id": "m;rm -rf"}]}', ('{"data": [{"id": "%s"}]}' % ("m" * 201)).encode(),
    None,  # nothing listens there
])
def test_api_base_without_a_model_and_no_usable_listing_says_what_to_set(
        no_keys, forges, server, listing):
    if listing is None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        base, httpd = f"http://127.0.0.1:{port}/v1", None
    else:
        handler = type("Listing", (_Listing,), {"body": listing})
        httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    try:
        forge = forges(api_base=base)
        with pytest.raises(InvalidOption, match="no model is set.*Set Forge.model"):
            forge.session("s").prompt("hi")
    finally:
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()
    assert server.requests == []  # and the demo model was not asked either


# ---------------------------------------------------------------------- 14: output limit


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_a_reply_cut_off_at_the_output_limit_is_marked_and_ends_the_run(make_forge, server,
                                                                        protocol, tmp_path):
    server.add(Turn.text("The first three reasons are: one, two, and", finish="length"),
               Turn.text("never asked for"))
    forge = make_forge(db="duckdb", protocol=protocol, max_tokens=64)
    answer = forge.session("s").prompt("why?")
    assert [r.body.get("max_tokens") for r in server.requests] == [64]
    assert server.remaining == 1  # the run stopped: no second step
    assert answer.status == "completed" and answer.finish == "length"
    assert answer.text.startswith("The first three reasons are: one, two, and")
    assert "Cut off at the output limit (max_tokens = 64)" in answer.text
    assert "Forge.max_tokens" in answer.text and "--max-tokens" in answer.text
    for shown in (message_text(answer), message_html(answer)):
        assert "Cut off at the output limit" in shown
    stored = forge.session("s").messages()[-1]
    assert stored.finish == "length" and "Cut off at the output limit" in stored.text
    step = [p for p in stored.parts if p.type == "step-finish"]
    assert [p.reason for p in step] == ["length"]


@pytest.mark.parametrize("arguments", ['{"n": 1, "note": "abc', {"n": 1}],
                         ids=["cut-mid-arguments", "complete-call"])
def test_tool_calls_of_a_cut_off_step_are_not_run_and_the_run_stops(make_forge, server,
                                                                     arguments):
    server.add(Turn([text("Counting now."), tool_call("step", arguments)], finish="length"),
               Turn.text("never asked for"))
    forge = make_forge()
    ran = []

    @forge.tool
    def step(n: int, note: str = "") -> str:
        """Record a step."""
        ran.append(n)
        return "done"

    answer = forge.session("s").prompt("count")
    assert ran == [] and len(server.requests) == 1
    [call] = answer.tool_parts
    assert call.state == "error" and "cut off at the output limit" in call.error
    assert answer.finish == "length" and answer.status == "completed"
    assert "the model server's own limit" in answer.text  # no max_tokens was set
    assert "Its tool calls were not run" in answer.text
    # the next prompt sends the cut call back as an error the model can read, never raw JSON
    server.add(Turn.text("Understood."))
    forge.session("s").prompt("go on")
    sent = server.requests[-1].messages
    results = [m for m in sent if m["role"] == "tool"]
    assert len(results) == 1 and "cut off at the output limit" in results[0]["content"]
    assert all(json.loads(c["function"]["arguments"]) is not None
               for m in sent if m.get("tool_calls") for c in m["tool_calls"])


def test_max_tokens_per_prompt_wins_and_unset_sends_none(make_forge, server):
    server.add(Turn.text("a"), Turn.text("b"), Turn.text("c"))
    make_forge().session("unset").prompt("q")
    forge = make_forge(max_tokens=500)
    session = forge.session("s")
    session.prompt("q", max_tokens=50)
    session.prompt("q")
    bodies = [r.body for r in server.requests]
    assert "max_tokens" not in bodies[0]
    assert [b.get("max_tokens") for b in bodies[1:]] == [50, 500]


def test_max_tokens_from_the_environment_reaches_the_request(monkeypatch, make_forge, server):
    monkeypatch.setenv("FORGE_MAX_TOKENS", "77")
    config = ForgeConfig()
    assert config.max_tokens == 77 and ("max_tokens", 77, "env FORGE_MAX_TOKENS") in config.effective()
    server.add(Turn.text("ok"))
    make_forge(max_tokens=config.forge_kwargs()["max_tokens"]).session("s").prompt("q")
    assert server.requests[0].body["max_tokens"] == 77
    monkeypatch.setenv("FORGE_MAX_TOKENS", "0")  # 0: the server's default
    assert ForgeConfig().forge_kwargs()["max_tokens"] is None


@pytest.mark.parametrize("value", [0, -1, 1.5, math.nan, math.inf, "100", True])
def test_a_max_tokens_that_cannot_work_is_refused_with_what_to_write(make_forge, server, value):
    with pytest.raises(InvalidOption, match="max_tokens must be a") as refused:
        make_forge(max_tokens=value)
    assert "Forge.max_tokens" in str(refused.value) and "FORGE_MAX_TOKENS" in str(refused.value)
    session = make_forge().session("s")
    with pytest.raises(InvalidOption, match="max_tokens must be a"):
        session.prompt("q", max_tokens=value)
    assert server.requests == [] and session.messages() == []
