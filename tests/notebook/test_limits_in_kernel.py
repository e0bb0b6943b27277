"""%%forge in a real kernel: a budget that cannot work is a usage message, and a model server
that accepts and then says nothing never hangs the cell (FORGE_STREAM_TIMEOUT)."""

from __future__ import annotations

import time

import pytest

from forge_jupyter.testing import Turn, delay, text
from tests.notebook.nb_kernel import forge_kernel, usage_error


@pytest.fixture(scope="module")
def kernel(model_server, tmp_path_factory):
    k = forge_kernel(model_server.openai_base, tmp_path_factory.mktemp("nb"),
                     {"FORGE_STREAM_TIMEOUT": "0.5"})
    yield k
    k.close()


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf"])
def test_a_budget_that_cannot_work_is_a_usage_message(kernel, server, value):
    before = len(server.requests)
    r = kernel.run(f"%%forge --budget {value}\nhi")
    assert r.status == "error" and usage_error(r), r.stderr
    assert "budget must be a number greater than 0" in r.stderr and value in r.stderr
    assert "Traceback" not in r.stderr
    assert len(server.requests) == before


def test_a_hung_first_request_is_retried_and_the_cell_answers(kernel, server):
    server.add(Turn([delay(60), text("never")]), Turn.text("answered on the retry"))
    started = time.monotonic()
    r = kernel.run("%%forge\nhello", timeout=60)
    assert r.status == "ok", r.error
    assert time.monotonic() - started < 30
    assert "answered on the retry" in r.stdout
    check = kernel.run("print(_.status, [p.type for p in _.parts].count('retry'))")
    assert check.stdout.strip() == "completed 1"


def test_a_stream_that_stalls_ends_the_cell_with_the_reason(kernel, server):
    server.add(Turn([text("Half an answer"), delay(60), text(" and the rest")]))
    started = time.monotonic()
    r = kernel.run("%%forge\nhello", timeout=60)
    assert time.monotonic() - started < 30
    assert "Half an answer" in r.stdout
    # a failed turn fails its cell, the reason in the error output (tests/notebook/test_cell_errors.py)
    assert r.status == "error" and r.error["ename"] == "ForgeModelError", r.text
    reason = r.error["evalue"]
    assert "went silent for 0.5 s" in reason and "FORGE_STREAM_TIMEOUT" in reason
    check = kernel.run("m = get_ipython()._forge_magics.controller.current().last\n"
                       "print(m.status); print(m.error.message)")
    status, stored = check.stdout.strip().split("\n", 1)
    assert status == "error" and "went silent for 0.5 s" in stored
