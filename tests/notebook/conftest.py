"""Fixtures the notebook tests share: one fake model server per test module, cleared per test."""

from __future__ import annotations

import pytest

from forge_jupyter.testing import FakeModelServer


@pytest.fixture(scope="module")
def model_server():
    with FakeModelServer() as server:
        yield server


@pytest.fixture
def server(model_server):
    model_server.clear()
    return model_server
