"""A panel server whose PostgreSQL database cannot be reached says so, without the password,
and reads again at the next request (no restart of the server)."""

from __future__ import annotations

import socket

import pytest
from traitlets.config import Config

from tests.server.api_helpers import refused


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def jp_server_config() -> Config:
    url = f"postgresql://forge_app:s3cret-pw@127.0.0.1:{closed_port()}/forge?connect_timeout=2"
    return Config({"ServerApp": {"jpserver_extensions": {"forge_jupyter": True}},
                   "Forge": {"db": url, "tenant": "alice"}})


@pytest.mark.parametrize("path", [("sessions",), ("costs",), ("sessions", "ses_x", "messages")])
async def test_an_unreachable_database_is_a_500_that_says_where_and_what_to_check(jp_fetch, path):
    for _ in range(2):  # the second request tries again (nothing was kept of the failure)
        body = await refused(jp_fetch, 500, *path)
        said = body.get("message", "")
        assert "PostgreSQL database forge on 127.0.0.1" in said and "cannot be reached" in said
        assert "Forge.db" in said and "s3cret-pw" not in str(body)
