"""Several kernels (processes) writing one PostgreSQL database at once: each its own sessions,
all of them one shared session too, every batch a transaction — nothing lost, no deadlock."""

from __future__ import annotations

import subprocess
import sys

import pytest

from forge_jupyter.model import SessionInfo
from forge_jupyter.store.postgres import PostgresStore
from forge_jupyter.store.postgres_schema import migrate

PROCESSES = 4
TURNS = 60  # each a user message and an assistant message of 5 parts, in one batch

WORKER = """
import sys
from forge_jupyter.model import Message, SessionInfo, TextPart, StepFinishPart, now
from forge_jupyter.store.ops import AppendMessage, PutMessage, PutPart
from forge_jupyter.store.postgres import PostgresStore

dsn, shared_id, n, turns = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
store = PostgresStore(dsn, tenant_id="t", pool_size=1)
own = store.create_session(SessionInfo(name=f"kernel-{n}"))
for i in range(turns):
    for session_id in (own.id, shared_id):
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
def dsn(pg_database) -> str:
    app = pg_database.create_app_role()
    migrate(pg_database.owner_dsn, (app.name,))
    return app.dsn


def test_kernels_writing_at_once_lose_nothing(dsn):
    store = PostgresStore(dsn, tenant_id="t")
    shared = store.create_session(SessionInfo(name="shared"))
    workers = [
        subprocess.Popen([sys.executable, "-c", WORKER, dsn, shared.id, str(n), str(TURNS)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for n in range(PROCESSES)
    ]
    try:
        for n, w in enumerate(workers):
            out, err = w.communicate(timeout=300)
            assert w.returncode == 0 and f"done {n}" in out, err[-3000:]
        for n in range(PROCESSES):
            own = store.find_session(f"kernel-{n}")
            timeline = store.read_timeline(own.id)
            assert len(timeline) == 2 * TURNS
            assert [len(m.parts) for m in timeline] == [1, 5] * TURNS
            assert [m.parts[0].text for m in timeline[::2]] == [f"{n}/{i}" for i in range(TURNS)]
        timeline = store.read_timeline(shared.id)
        assert len(timeline) == 2 * PROCESSES * TURNS
        # each batch landed whole: a question is always followed by its own answer
        for asked, answer in zip(timeline[::2], timeline[1::2], strict=True):
            assert asked.role == "user" and answer.parent_id == asked.id
        for n in range(PROCESSES):  # and in each kernel's order
            mine = [m.parts[0].text for m in timeline[::2] if m.parts[0].text.startswith(f"{n}/")]
            assert mine == [f"{n}/{i}" for i in range(TURNS)]
    finally:
        for w in workers:
            if w.poll() is None:
                w.kill()
        store.close()
