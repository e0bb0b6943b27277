"""pytest fixtures: `pytest_plugins = ["forge_jupyter.testing.fixtures"]`."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from forge_jupyter.testing.server import FakeModelServer


@pytest.fixture
def fake_model_server() -> Iterator[FakeModelServer]:
    """A running FakeModelServer with an empty script; add turns with `fake_model_server.add(...)`."""
    with FakeModelServer() as server:
        yield server
