"""Runners of one session on a PostgreSQL store, through the real prompt path (fake server +
litellm + PostgreSQL): a runner whose lease another took over stops and says so, and from the
takeover on nothing of it lands — its flushes are fenced by the lease, between heartbeats too."""

from __future__ import annotations

import threading
import time

import pytest

from forge_jupyter.errors import LeaseLost
from forge_jupyter.message import Message, TextPart, now
from forge_jupyter.session import runner
from forge_jupyter.session.recovery import recover
from forge_jupyter.store.ops import AppendMessage, PutMessage, PutPart
from forge_jupyter.store.postgres.store import PostgresStore
from forge_jupyter.testing import Turn, delay, text, tool_call
from forge_jupyter.tools.base import Tool, ToolResult


@pytest.fixture
def dsn(pg_empty) -> str:
    return pg_empty[1].dsn  # the run's migrated database, emptied (tests/pg_cluster.py)


class OtherHost:
    """Another kernel on another host: judging the runner dead, it takes the session over,
    closes what the runner left open and writes a turn of its own, fenced by its lease."""

    def __init__(self, dsn: str, session_id: str) -> None:
        self.store = PostgresStore(dsn, tenant_id="t")
        self.session_id = session_id
        self.took: list[str] = []
        self.took_at = 0.0
        self.rows: list[Message] = []  # the session as the new owner left it

    def take_over(self) -> None:
        sid = self.session_id
        held = self.store.lease(sid)
        assert held is not None, "the runner held no lease"
        assert self.store.acquire_lease(sid, "host-b", 60, replacing=held[0])
        self.took_at = time.monotonic()
        self.took.append(held[0])
        recover(self.store, sid, actor="host-b")
        asked = Message(session_id=sid, role="user", status="completed", completed_at=now())
        said = TextPart(session_id=sid, message_id=asked.id, text="host-b's turn", time_end=now())
        self.store.write([PutMessage(asked), PutPart(said), AppendMessage(sid, asked.id)],
                         lease_owners={sid: "host-b"})
        self.rows = self.store.read_timeline(sid)

    def assert_untouched(self) -> None:
        """Nothing of the stale runner landed after the takeover: the new owner's session is
        as it left it, and the only row the stale runner added is the notice saying it stopped."""
        assert self.store.read_timeline(self.session_id) == self.rows
        notices = [e.data["message"] for e in self.store.events(self.session_id, type="notice").items]
        assert len(notices) == 1 and "lost session" in notices[0] and "host-b" in notices[0]
        assert self.store.lease(self.session_id)[0] == "host-b"  # the stale runner gave nothing back


def test_a_runner_that_lost_its_lease_stops_and_says_so(make_forge, server, dsn, monkeypatch):
    monkeypatch.setattr(runner, "LEASE_TTL", 0.6)  # a beat every 0.2 s
    server.add(Turn([text("The first half."), delay(6), text(" Never shown.")]))
    forge = make_forge(db=dsn, tenant="t")
    session = forge.session("shared")
    other = OtherHost(dsn, session.id)

    def take_over() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any(r.responded_at for r in server.requests):
            time.sleep(0.02)
        other.take_over()

    from forge_jupyter.bus import MessageUpdated

    seen: list = []  # what a live view was told (the widget follows the bus)
    forge.bus.subscribe(lambda ev: seen.append(ev.message), session_id=session.id,
                        types=MessageUpdated)
    thief = threading.Thread(target=take_over)
    thief.start()
    try:
        with pytest.raises(LeaseLost, match="lost session .* to another runner") as lost:
            session.prompt("go on")
        returned_at = time.monotonic()
        closed = [m for m in seen if m.role == "assistant" and m.error is not None]
        # the view's last word on the answer says why it stopped — not "stopped by the user"
        assert closed and closed[-1].error.message == ("stopped: another runner took this "
                                                       "session over"), closed
        thief.join()
        assert other.took, "the lease was never taken over mid-answer"
        assert "host-b" in str(lost.value)
        assert returned_at - other.took_at < 3.5  # stopped at once, not streamed on
        assert len(server.requests) == 1  # the model was not asked again
        other.assert_untouched()
        assert "Never shown" not in "".join(m.text for m in other.rows)
    finally:
        thief.join()
        other.store.close()


def test_a_flush_between_heartbeats_is_fenced_and_stops_the_run(make_forge, server, dsn):
    """A heartbeat every 20 s: only the fence can see the takeover. The next checkpoint of
    the streaming answer (within a second) is refused, and the run stops there."""
    streamed = "".join(f"word{i} " for i in range(600))  # ~5,000 characters over ~8 s
    server.add(Turn([text(streamed, chunk=15)], chunk_delay=0.02))
    forge = make_forge(db=dsn, tenant="t")
    session = forge.session("shared")
    other = OtherHost(dsn, session.id)

    def take_over() -> None:  # once a checkpoint of the answer is in the database
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            answers = [m for m in other.store.read_timeline(session.id) if m.role == "assistant"]
            if answers and len(answers[0].text) > 100:
                other.take_over()
                return
            time.sleep(0.05)

    thief = threading.Thread(target=take_over)
    thief.start()
    try:
        started = time.monotonic()
        with pytest.raises(LeaseLost, match="host-b"):
            session.prompt("tell me a long story")
        returned_at = time.monotonic()
        thief.join()
        assert other.took, "the lease was never taken over mid-answer"
        assert returned_at - other.took_at < 3  # the next checkpoint, not the next beat
        assert returned_at - started < runner.LEASE_TTL / 3
        kept = next(m for m in other.rows if m.role == "assistant")
        assert kept.status == "interrupted"  # closed by the new owner, not by the stale runner
        assert streamed.startswith(kept.text.strip()) and len(kept.text) < len(streamed) - 100
        other.assert_untouched()
        assert len(server.requests) == 1
    finally:
        thief.join()
        other.store.close()


def test_a_tool_result_after_the_takeover_is_not_stored_nor_sent(make_forge, server, dsn):
    """The session is taken over while a tool runs: its result, the flush before the next
    model request, is refused — the model is never asked again for this run."""
    server.add(Turn([text("Let me check."), tool_call("check", {})]),
               Turn.text("This answer must never be asked for."))
    forge = make_forge(db=dsn, tenant="t")
    session = forge.session("shared")
    other = OtherHost(dsn, session.id)

    def check(args, ctx) -> ToolResult:
        other.take_over()  # meanwhile, on another host
        return ToolResult(output="a result nobody stores")

    forge.add_tool(Tool(name="check", description="check something",
                        parameters={"type": "object", "properties": {}}, execute=check))
    try:
        with pytest.raises(LeaseLost, match="lost session"):
            session.prompt("check it")
        assert other.took
        assert len(server.requests) == 1  # the tool's result was never sent
        answer = next(m for m in other.rows if m.role == "assistant")
        call = answer.tool_parts[0]
        assert call.state == "error" and call.error.startswith("interrupted")
        assert "a result nobody stores" not in (call.output or "")
        other.assert_untouched()
    finally:
        other.store.close()
