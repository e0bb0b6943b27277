"""Shared by the history-as-data tests. A scripted history, run once per backend through the
real loop (litellm over loopback HTTP to the fake model server) into a real DuckDB file and
into the memory store; and what the store holds, read through the store's own API (not SQL):
the figures the frames must reproduce.

Four sessions of the default tenant and one of another tenant sharing the database:
  alpha  gpt-4o-mini, three cells: two tool calls (one fails), a slow tool, a manual
         compaction that keeps the last turn verbatim, and a turn after it
  beta   gpt-4: a context overflow compacts automatically; a failing tool
  gamma  a model the price table does not know (cost NaN), then a provider error
  fork   a fork of alpha, answered once more
  theirs (tenant "other") one turn with a tool call
"""

from __future__ import annotations

import os
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from forge_jupyter import Forge
from forge_jupyter.message import Event, Message, StepFinishPart
from forge_jupyter.session.retry import RetryPolicy
from forge_jupyter.session.session import Session
from forge_jupyter.store.base import Store
from forge_jupyter.testing import FakeModelServer, Turn, tool_call

PRICED, SMALL, UNPRICED = "openai/gpt-4o-mini", "openai/gpt-4", "openai/fake-model"
NOTEBOOK = "analysis.ipynb"
SLOW = 0.05  # seconds the slow tool sleeps


def words(tag: str, n: int = 20) -> str:
    """``n`` distinct words (litellm refuses a stream that repeats one chunk)."""
    return " ".join(f"{tag}-{i}" for i in range(n))


def say(text: str, usage: tuple[int, int]) -> Turn:
    return Turn.text(text, chunk=256, usage=usage)


def cell(n: int) -> dict:
    return {"notebook": NOTEBOOK, "cell_id": f"cell-{n}", "execution_count": n}


def make_forge(server: FakeModelServer, db, *, tenant: str = "default", **kw) -> Forge:
    kwargs = server.model_kwargs("openai")
    kwargs["model"] = PRICED
    forge = Forge(db=db, tenant=tenant, builtin_tools=False, load_plugins=False,
                  retry=RetryPolicy(max_attempts=2, base_delay=0.01, max_delay=0.02),
                  **kwargs, **kw)

    @forge.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @forge.tool
    def boom(why: str) -> str:
        """Always fails."""
        raise RuntimeError(f"boom: {why}")

    @forge.tool
    def slow(label: str) -> str:
        """Takes a while."""
        time.sleep(SLOW)
        return label * 50

    return forge


@dataclass
class Run:
    kind: str  # "memory" | "duckdb"
    forge: Forge
    other: Forge  # tenant "other", same database
    sessions: dict[str, Session] = field(default_factory=dict)
    path: Path | None = None


def script(server: FakeModelServer, forge: Forge, other: Forge) -> dict[str, Session]:
    s: dict[str, Session] = {}
    alpha = s["alpha"] = forge.session("alpha")
    server.add(Turn([tool_call("add", {"a": 2, "b": 3}), tool_call("boom", {"why": "first"})],
                    usage=(120, 20)),
               say("It is 5; boom failed.", (180, 12)))
    alpha.prompt("What is 2+3? Also try boom.", origin=cell(1))
    server.add(Turn([tool_call("slow", {"label": "x"})], usage=(260, 15)),
               say(words("slow-done"), (340, 30)))
    alpha.prompt("Run the slow tool.", origin=cell(2))
    server.add(say("## Goal\n" + words("summary-alpha"), (400, 60)))
    alpha.compact()
    server.add(say(words("after"), (150, 9)))
    alpha.prompt("And now?", origin=cell(3))

    beta = s["beta"] = forge.session("beta", model=SMALL)
    server.add(say(words("b0"), (500, 40)))
    beta.prompt(words("q0"), origin=cell(4))
    server.add(say(words("b1"), (3_200, 40)))
    beta.prompt(words("q1"), origin=cell(5))
    server.add(say("## Goal\n" + words("summary-beta"), (3_000, 100)),
               Turn([tool_call("boom", {"why": "beta"})], usage=(700, 20)),
               say(words("b2"), (760, 30)))
    beta.prompt(words("q2"), origin=cell(6))

    gamma = s["gamma"] = forge.session("gamma", model=UNPRICED)
    server.add(say("unpriced answer", (90, 7)))
    gamma.prompt("A question for a model without a price.")
    server.add(Turn.error(400, "bad request: scripted"))
    gamma.prompt("This one fails.")

    fork = s["fork"] = alpha.fork(name="alpha-fork")
    server.add(say("from the fork", (210, 11)))
    fork.prompt("Continue in the fork.", origin=cell(7))

    theirs = s["theirs"] = other.session("theirs")
    server.add(Turn([tool_call("add", {"a": 1, "b": 1})], usage=(55, 5)), say("2", (60, 3)))
    theirs.prompt("1+1?")
    return s


# ---------------------------------------------- what the store holds, read through its API


def live_sessions(store: Store) -> list:
    found, cursor = [], None
    while True:
        page = store.list_sessions(cursor=cursor)
        found.extend(page.items)
        if page.next_cursor is None:
            return found
        cursor = page.next_cursor


def bodies(store: Store) -> dict[str, Message]:
    """Every message body reachable from a live session's timeline, once each."""
    found: dict[str, Message] = {}
    for info in live_sessions(store):
        for m in store.iter_timeline(info.id):
            found.setdefault(m.id, m)
    return found


def all_events(store: Store, session_id: str | None = None, type: str | None = None
               ) -> list[Event]:
    found, cursor = [], None
    while True:
        page = store.events(session_id, type=type, cursor=cursor)
        found.extend(page.items)
        if page.next_cursor is None:
            return found
        cursor = page.next_cursor


def expected_costs(store: Store, by: str) -> dict[tuple, tuple]:
    """{group key: (steps, input, output, reasoning, cache read, cache write, cost, unpriced)}
    summed from the stored step-finish parts."""
    messages = bodies(store)
    names = {s.id: s.name for s in live_sessions(store)}
    sums: dict[tuple, list] = defaultdict(lambda: [0, 0, 0, 0, 0, 0, 0.0, 0])
    for m in messages.values():
        for p in m.parts:
            if not isinstance(p, StepFinishPart):
                continue
            origin = (store.get_message(m.parent_id, with_parts=False).origin or {}
                      if m.parent_id else {})
            key = {
                "session": (m.session_id, names.get(m.session_id)),
                "day": (datetime.fromtimestamp(p.created_at, UTC).date(),),
                "model": (m.model,),
                "agent": (m.agent,),
                "cell": (origin.get("notebook"), origin.get("cell_id")),
            }[by]
            row = sums[key]
            t = p.tokens
            for i, v in enumerate((1, t.input, t.output, t.reasoning, t.cache_read,
                                   t.cache_write)):
                row[i] += v
            if p.cost is None:
                row[7] += 1
            else:
                row[6] += p.cost
    return {k: tuple(v) for k, v in sums.items()}
