"""Poisoned sessions (session/poisoned.py): the verdict, read from the store of real turns.

The turns are real — the fake model server through litellm, tools that really fail, a real
DuckDB file (and the in-memory store: the verdict reads only the Store API). Idleness is
judged at an injected ``now``; the notebook tests (tests/notebook/test_poisoned_magic.py) let
real time pass instead.
"""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import pytest

from forge_jupyter import Forge
from forge_jupyter.message import Message, TextPart
from forge_jupyter.session.approval import Answer
from forge_jupyter.session.poisoned import FAILED_IN_A_ROW, poisoned, session_max_age
from forge_jupyter.testing import Turn, tool_call

HALF_HOUR = timedelta(minutes=30)
LATER = 31 * 60  # seconds after the last turn: idle past the default max age


def price_tool(forge: Forge, fails: bool = True, mutating: bool = False) -> None:
    @forge.tool(mutating=mutating)
    def fetch_price(ticker: str) -> str:
        """The latest price of a stock."""
        if fails:
            raise ConnectionError(f"price service unreachable for {ticker}")
        return f"{ticker}: 101.5"


def calls(*tickers: str, then: str = "The price service keeps failing; I give up.") -> list[Turn]:
    """One model step per call (each with other arguments: no doom loop), then an answer."""
    return [Turn([tool_call("fetch_price", {"ticker": t})]) for t in tickers] + [Turn.text(then)]


def failed_session(forge: Forge, server, name: str | None = None) -> Any:
    """A session whose one turn's three tool calls all failed."""
    price_tool(forge)
    s = forge.session(name)
    server.add(*calls("ACME", "INIT", "GLOBX"))
    s.prompt("Prices?")
    return s


def later(seconds: float = LATER) -> float:
    return time.time() + seconds


@pytest.mark.parametrize("db", [":memory:", "duckdb"])
def test_repeated_failures_then_idle_is_poisoned(make_forge, server, db):
    forge = make_forge(db)
    price_tool(forge)
    s = forge.session("prices")
    server.add(*calls("ACME", "INIT", "GLOBX"))
    answer = s.prompt("What do ACME, INIT and GLOBX trade at?")
    assert answer.status == "completed"  # the turn itself ended well: only its tools failed

    verdict = poisoned(forge.store, s.id, HALF_HOUR, now=later())
    assert verdict is not None
    assert (verdict.session_id, verdict.name) == (s.id, "prices")
    assert len(verdict.failed) == FAILED_IN_A_ROW == 3
    assert [p.tool for p in verdict.failed] == ["fetch_price"] * 3
    assert "unreachable for GLOBX" in verdict.failed[0].error  # newest first
    assert LATER - 60 < verdict.idle < LATER + 5
    assert verdict.mark()["failed_calls"] == 3 and verdict.mark()["from"] == s.id


def test_the_verdict_on_postgresql(make_forge, server, pg_empty):
    _, app = pg_empty  # the run's migrated database, emptied (tests/pg_cluster.py)
    forge = make_forge(app.dsn)
    s = failed_session(forge, server, "prices")
    verdict = poisoned(forge.store, s.id, HALF_HOUR, now=later())
    assert verdict is not None and len(verdict.failed) == 3
    assert poisoned(forge.store, s.id, HALF_HOUR) is None


def test_poisoned_but_recent_is_kept(make_forge, server):
    forge = make_forge("duckdb")
    s = failed_session(forge, server)
    assert poisoned(forge.store, s.id, HALF_HOUR) is None  # now: a moment after the turn
    assert poisoned(forge.store, s.id, HALF_HOUR, now=later(29 * 60)) is None
    assert poisoned(forge.store, s.id, None, now=later(86_400)) is None  # 0: off


def test_healthy_idle_session_is_kept(make_forge, server):
    forge = make_forge("duckdb")
    price_tool(forge, fails=False)
    s = forge.session()
    server.add(*calls("ACME", "INIT", "GLOBX", then="ACME, INIT and GLOBX: 101.5 each."))
    s.prompt("Prices?")
    server.add(Turn.text("Hello."))
    s.prompt("And hello.")  # no tools at all in the newest turn
    assert poisoned(forge.store, s.id, HALF_HOUR, now=later(86_400)) is None


def test_a_success_after_the_failures_clears_them(make_forge, server):
    forge = make_forge("duckdb")
    s = failed_session(forge, server)
    assert poisoned(forge.store, s.id, HALF_HOUR, now=later()) is not None

    @forge.tool
    def cached_price(ticker: str) -> str:
        """A price from the cache."""
        return f"{ticker}: 99"

    server.add(Turn([tool_call("cached_price", {"ticker": "A"})]),
               Turn([tool_call("fetch_price", {"ticker": "D"})]),
               Turn([tool_call("fetch_price", {"ticker": "E"})]), Turn.text("A is 99."))
    s.prompt("Try the cache.")
    # newest back: two failures, then a call that completed — not three in a row
    assert poisoned(forge.store, s.id, HALF_HOUR, now=later()) is None


def test_failures_across_turns_count_a_tool_less_answer_does_not_clear_them(make_forge, server):
    forge = make_forge("duckdb")
    price_tool(forge)
    s = forge.session()
    server.add(*calls("A", "B"))
    s.prompt("Prices?")
    server.add(*calls("C"))
    s.prompt("Once more.")
    server.add(Turn.text("Two and two make four."))
    s.prompt("What is 2+2?")  # answered without tools: the failures are still in its context
    verdict = poisoned(forge.store, s.id, HALF_HOUR, now=later())
    assert verdict is not None and len(verdict.failed) == 3


def test_calls_the_person_refused_are_not_failures(make_forge, server):
    forge = make_forge("duckdb")
    price_tool(forge, mutating=True)  # the build agent asks before each call
    forge.on_approval(lambda request: Answer("deny", "not now"))
    s = forge.session()
    server.add(*calls("A", "B", "C", "D", then="You declined each call."))
    s.prompt("Prices?")
    parts = [p for m in s.messages() for p in m.tool_parts]
    assert [p.state for p in parts] == ["error"] * 4
    assert all(p.metadata.get("permission") == "denied" for p in parts)
    assert poisoned(forge.store, s.id, HALF_HOUR, now=later()) is None


def test_idle_is_read_from_the_store_by_another_forge(make_forge, server, tmp_path):
    """A kernel restart: a new process, the same file, the same verdict."""
    forge = make_forge("duckdb")
    s = failed_session(forge, server, "before-restart")
    forge.close()
    with Forge(db=str(tmp_path / "forge.duckdb"), builtin_tools=False) as reopened:
        verdict = poisoned(reopened.store, s.id, HALF_HOUR, now=later())
        assert verdict is not None and verdict.name == "before-restart"


def test_a_turn_still_open_is_never_idle(make_forge, server):
    """An old running message (a turn waiting, or a runner that died): not set aside here."""
    forge = make_forge("duckdb")
    s = failed_session(forge, server)
    old = time.time() - 3600
    waiting = Message(session_id=s.id, role="user", status="completed", created_at=old,
                      completed_at=old)
    waiting.parts = [TextPart(session_id=s.id, message_id=waiting.id, text="More?")]
    forge.store.put_message(waiting)
    forge.store.append_message(s.id, waiting.id)
    running = Message(session_id=s.id, role="assistant", parent_id=waiting.id, created_at=old)
    forge.store.put_message(running)
    forge.store.append_message(s.id, running.id)
    assert poisoned(forge.store, s.id, HALF_HOUR, now=later()) is None


def test_an_empty_or_just_created_session_is_not_poisoned(make_forge):
    forge = make_forge("duckdb")
    s = forge.session()
    assert poisoned(forge.store, s.id, HALF_HOUR, now=later()) is None


@pytest.mark.parametrize(("spelled", "seconds"), [
    ("30m", 1800), ("1h", 3600), (" 2D ", 172_800), ("1.5h", 5400), ("45", 45), (45, 45),
    (90.0, 90), ("0", None), (0, None), ("0m", None), ("0 hours", None), ("", None),
    ("off", None), (timedelta(minutes=5), 300),
])
def test_session_max_age_spellings(spelled, seconds):
    age = session_max_age(spelled)
    assert (None if age is None else age.total_seconds()) == seconds


@pytest.mark.parametrize("spelled", ["-5", "abc", "0x", "30 parsecs", "1h30", [30]])
def test_session_max_age_refuses_what_it_cannot_read(spelled):
    with pytest.raises(ValueError, match="like '30m'"):
        session_max_age(spelled)


@pytest.mark.parametrize("name", ["prices", "<img src=x onerror=alert(1)>", "a & b <b>c</b>"])
def test_the_first_turn_of_the_fresh_session_says_so_on_its_record(make_forge, server, name):
    from forge_jupyter import render
    from forge_jupyter.session.view import load_turn

    forge = make_forge("duckdb")
    old = failed_session(forge, server, name)
    verdict = poisoned(forge.store, old.id, HALF_HOUR, now=later(2 * 3600 + 5))
    assert verdict is not None
    new = forge.session(None, new=True)
    server.add(Turn.text("Starting over."), Turn.text("Still here."))
    new.prompt("Prices, please.", origin={"notebook": "n.ipynb", "fresh_start": verdict.mark()})
    forge.flush()
    turn = load_turn(forge.store, new.id)
    line = (f"↺ New session — {name} ({old.id}) was set aside (idle for 2 hours, its last 3 "
            f"tool calls failed); it is still readable: %forge use {old.id}")
    assert line in render.turn_work_text(turn)
    html = render.turn_work_html(turn)
    assert "was set aside (idle for 2 hours" in html
    assert "<img" not in html and "<b>c" not in html  # a session name is text, never markup
    new.prompt("And now?")  # the next turn of the fresh session: no such line
    forge.flush()
    assert "New session" not in render.turn_work_text(load_turn(forge.store, new.id))


@pytest.mark.parametrize("tool", ["<img src=x onerror=alert(1)>", "evil\x1b[2J\nname",
                                  "a" * 200, "price tool"])
def test_the_notice_never_repeats_a_tool_name_the_model_made_up(make_forge, server, tool):
    from forge_jupyter.session.poisoned import notice

    forge = make_forge("duckdb")
    s = forge.session()
    server.add(*[Turn([tool_call(tool, {"n": i})]) for i in range(3)], Turn.text("Gave up."))
    s.prompt("Prices?")
    verdict = poisoned(forge.store, s.id, HALF_HOUR, now=later())
    assert verdict is not None and len(verdict.failed) == 3  # unknown tools: failures
    said = notice(verdict, "ses_new", "30m")
    assert tool not in said and "(a misnamed tool)" in said
    assert "\x1b" not in said and "<img" not in said
