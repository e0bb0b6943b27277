"""Runners of one session on a PostgreSQL store, through the real prompt path (fake server +
litellm + PostgreSQL): a runner whose lease another took over stops and says so."""

from __future__ import annotations

import threading
import time

import pytest

from forge_jupyter.session import runner
from forge_jupyter.store.postgres import PostgresStore
from forge_jupyter.store.postgres_schema import migrate
from forge_jupyter.testing import Turn, delay, text


@pytest.fixture
def dsn(pg_database) -> str:
    app = pg_database.create_app_role()
    migrate(pg_database.owner_dsn, (app.name,))
    return app.dsn


def test_a_runner_that_lost_its_lease_stops_and_says_so(make_forge, server, dsn, monkeypatch):
    monkeypatch.setattr(runner, "LEASE_TTL", 0.6)  # a beat every 0.2 s
    server.add(Turn([text("The first half."), delay(6), text(" Never shown.")]))
    forge = make_forge(db=dsn, tenant="t")
    session = forge.session("shared")
    other = PostgresStore(dsn, tenant_id="t")
    took: list[str] = []
    took_at: list[float] = []

    def take_over() -> None:
        """Another host, judging this runner dead, takes the session mid-answer."""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any(r.responded_at for r in server.requests):
            time.sleep(0.02)
        held = other.lease(session.id)
        if held is not None and other.acquire_lease(session.id, "host-b", 60, replacing=held[0]):
            took.append(held[0])
            took_at.append(time.monotonic())

    thief = threading.Thread(target=take_over)
    thief.start()
    answer = session.prompt("go on")
    returned_at = time.monotonic()
    thief.join()
    try:
        assert took, "the lease was never taken over mid-answer"
        assert returned_at - took_at[0] < 3.5  # stopped at the next beat, not streamed on
        assert answer.status == "aborted" and "Never shown" not in answer.text
        assert len(server.requests) == 1  # the model was not asked again
        notices = [e.data["message"] for e in other.events(session.id, type="notice").items]
        assert any("lost session" in n and "host-b" in n for n in notices), notices
        assert other.lease(session.id)[0] == "host-b"  # the stale runner gave nothing back
    finally:
        other.close()
