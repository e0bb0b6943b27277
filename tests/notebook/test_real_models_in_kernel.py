"""A notebook against a key-less local server (issue 12, items 13-15), in a real kernel:
FORGE_API_BASE with no key works, ``%%forge --max-tokens`` and ``%config Forge.max_tokens`` /
``Forge.tool_profile`` reach the request, and a cut-off reply says so in the cell."""

from __future__ import annotations

import os

import pytest

from forge_jupyter.model_choice import PLACEHOLDER_KEY
from forge_jupyter.testing import Turn
from tests.notebook.nb_kernel import forge_kernel


@pytest.fixture(scope="module")
def kernel(model_server, tmp_path_factory):
    root = tmp_path_factory.mktemp("nb")
    hidden = {k: os.environ.pop(k) for k in list(os.environ)  # a laptop with no key at all
              if k.endswith("_API_KEY") or k in ("OPENAI_ADMIN_KEY", "FORGE_MAX_TOKENS",
                                                 "FORGE_TOOL_PROFILE")}
    try:
        k = forge_kernel(model_server.openai_base, root, key=None, model="openai/local-model")
    finally:
        os.environ.update(hidden)
    yield k
    k.close()


def test_max_tokens_option_reaches_the_server_and_a_cut_off_reply_says_so(kernel, server):
    before = len(server.requests)
    server.add(Turn.text("A long story that goes on and", finish="length"))
    r = kernel.run("%%forge --max-tokens 42\nTell me a long story.")
    assert r.status == "ok", r.error
    [request] = server.requests[before:]
    assert request.body["max_tokens"] == 42
    assert request.headers["authorization"] == f"Bearer {PLACEHOLDER_KEY}"  # no key needed
    assert "A long story that goes on and" in r.text
    assert "Cut off at the output limit (max_tokens = 42)" in r.text
    assert PLACEHOLDER_KEY not in r.text
    check = kernel.run("print(_.finish, _.status)")
    assert check.stdout.strip() == "length completed"


def test_config_set_after_the_first_prompt_applies_to_the_next(kernel, server):
    server.add(Turn.text("one"), Turn.text("two"))
    assert kernel.run("%%forge\nhi").status == "ok"
    assert kernel.run('%config Forge.max_tokens = 99\n%config Forge.tool_profile = "lean"').status == "ok"
    assert kernel.run("%%forge\nhi again").status == "ok"
    first, second = server.requests[-2:]
    assert "max_tokens" not in first.body and "write" in first.tools
    assert second.body["max_tokens"] == 99
    assert sorted(second.tools) == ["edit", "python", "read", "sql", "variables"]
    kernel.run('%config Forge.max_tokens = 0\n%config Forge.tool_profile = "auto"')


@pytest.mark.parametrize("value", ["0", "-5", "abc", "1.5"])
def test_a_max_tokens_option_that_cannot_work_is_a_usage_message(kernel, server, value):
    before = len(server.requests)
    r = kernel.run(f"%%forge --max-tokens {value}\nhi")
    assert r.status == "error" and r.stderr.startswith("UsageError: "), r.stderr
    assert "Traceback" not in r.stderr and "max" in r.stderr
    assert len(server.requests) == before
