"""Several kernels (processes) writing one PostgreSQL database at once: each its own session,
all of them one shared session too, every batch a transaction — nothing lost, no deadlock.

Two sizes: 4 kernels × 60 turns, each turn written into both sessions (quick), and the issue's
8 kernels × 500 turns, each turn written into the kernel's own session or the shared one in
turn (250 each: 4,000 turns, 24,000 parts; 40–55 s on two loaded cores — writing every turn
into both sessions, 8,000 turns, took 90 s there).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from forge_jupyter.message import SessionInfo
from forge_jupyter.store.postgres.store import PostgresStore

WORKER = """
import sys
from forge_jupyter.message import Message, SessionInfo, TextPart, StepFinishPart, now
from forge_jupyter.store.ops import AppendMessage, PutMessage, PutPart
from forge_jupyter.store.postgres.store import PostgresStore

dsn, shared_id, n, turns = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
both = sys.argv[5] == "both"  # each turn into both sessions, or alternately into each
store = PostgresStore(dsn, tenant_id="t", pool_size=1)
own = store.create_session(SessionInfo(name=f"kernel-{n}"))
for i in range(turns):
    for session_id in (own.id, shared_id) if both else ((own.id, shared_id)[i % 2],):
        asked = Message(session_id=session_id, role="user", status="completed", completed_at=now())
        answer = Message(session_id=session_id, role="assistant", status="completed",
                         parent_id=asked.id, completed_at=now())
        ops = [PutMessage(asked), PutPart(TextPart(session_id=session_id, message_id=asked.id,
                                                   text=f"{n}/{i}", time_end=now())),
               AppendMessage(session_id, asked.id), PutMessage(answer)]
        ops += [PutPart(TextPart(session_id=session_id, message_id=answer.id, text=f"p{k}",
                                 time_end=now())) for k in range(4)]
        ops += [PutPart(StepFinishPart(session_id=session_id, message_id=answer.id)),
                AppendMessage(session_id, answer.id)]
        store.write(ops)
store.close()
print("done", n)
"""


@pytest.fixture
def dsn(pg_empty) -> str:
    return pg_empty[1].dsn  # the run's migrated database, emptied (tests/pg_cluster.py)


def _run(dsn: str, processes: int, turns: int, mode: str) -> None:
    """``processes`` workers at once; each writes ``turns`` turns (one batch each)."""
    store = PostgresStore(dsn, tenant_id="t")
    shared = store.create_session(SessionInfo(name="shared"))
    workers = [
        subprocess.Popen([sys.executable, "-c", WORKER, dsn, shared.id, str(n), str(turns), mode],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for n in range(processes)
    ]
    try:
        for n, w in enumerate(workers):
            out, err = w.communicate(timeout=280)  # a deadlock fails a worker, or times out
            assert w.returncode == 0 and f"done {n}" in out, err[-3000:]
        both = mode == "both"
        in_shared: dict[int, list[int]] = {}
        part_ids: list[str] = []
        for n in range(processes):
            own = store.find_session(f"kernel-{n}")
            mine = [i for i in range(turns) if both or i % 2 == 0]
            in_shared[n] = [i for i in range(turns) if both or i % 2 == 1]
            part_ids += _check_turns(store.read_timeline(own.id), [f"{n}/{i}" for i in mine])
        timeline = store.read_timeline(shared.id)
        assert len(timeline) == 2 * sum(len(v) for v in in_shared.values())
        part_ids += _check_turns(timeline, None)
        for n in range(processes):  # in each kernel's order
            asked = [m.parts[0].text for m in timeline[::2]]
            assert [a for a in asked if a.startswith(f"{n}/")] == [f"{n}/{i}" for i in in_shared[n]]
        # every part of every turn, each once: 6 per turn
        per_turn = 2 if both else 1
        assert len(part_ids) == len(set(part_ids)) == 6 * processes * turns * per_turn
    finally:
        for w in workers:
            if w.poll() is None:
                w.kill()
        store.close()


def _check_turns(timeline: list, asked: list[str] | None) -> list[str]:
    """Each batch landed whole and in order: a question, then its own answer with its five
    parts in the order written; returns the part ids."""
    assert len(timeline) % 2 == 0
    if asked is not None:
        assert [m.parts[0].text for m in timeline[::2]] == asked
    ids = []
    for question, answer in zip(timeline[::2], timeline[1::2], strict=True):
        assert question.role == "user" and answer.role == "assistant"
        assert answer.parent_id == question.id and answer.status == "completed"
        assert [p.type for p in question.parts] == ["text"]
        assert [p.type for p in answer.parts] == ["text"] * 4 + ["step-finish"]
        assert [p.text for p in answer.parts[:4]] == ["p0", "p1", "p2", "p3"]
        ids += [p.id for p in question.parts + answer.parts]
    return ids


def test_kernels_writing_at_once_lose_nothing(dsn):
    _run(dsn, processes=4, turns=60, mode="both")


@pytest.mark.slow
def test_eight_kernels_times_500_turns_lose_nothing(dsn):
    _run(dsn, processes=8, turns=500, mode="alternate")
