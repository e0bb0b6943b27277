"""Fixtures the notebook tests share: one fake model server per test module for the tests that
drive a kernel (the kernel is module-scoped and keeps talking to it), cleared per test."""

from __future__ import annotations

import pytest

from forge_jupyter.testing import FakeModelServer


@pytest.fixture(scope="module")
def model_server():
    with FakeModelServer() as server:
        yield server


@pytest.fixture
def server(request):
    """The kernel's module-wide server (cleared) for a test that uses ``kernel``; else the
    per-test server that ``make_forge`` talks to (tests/conftest.py)."""
    if "kernel" in request.fixturenames:
        model_server = request.getfixturevalue("model_server")
        model_server.clear()
        return model_server
    return request.getfixturevalue("fake_model_server")


@pytest.fixture
def panel(kernel):
    """A side panel attached to the module's kernel (a ``PanelKernel``) for one test, its info
    already received; closed after it."""
    comm_id = kernel.open_panel()
    assert kernel.received[comm_id][0]["kind"] == "info"
    yield comm_id
    kernel.close_panel(comm_id)

