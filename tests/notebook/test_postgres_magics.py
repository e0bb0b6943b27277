"""``%forge sql`` and the frames' magics in a real kernel whose store is PostgreSQL.

The kernel runs with ``FORGE_DB`` set to a ``postgresql://`` URL of a role shared by two
tenants (the unpinned setup), as tenant ``a``; tenant ``b`` wrote a secret first. What the
person types in the notebook answers for ``a`` only, however it is spelt.
"""

from __future__ import annotations

import pytest

from forge_jupyter.message import Message, SessionInfo, TextPart, now
from forge_jupyter.store.ops import AppendMessage, PutMessage, PutPart
from forge_jupyter.store.postgres.schema import migrate
from forge_jupyter.store.postgres.store import PostgresStore
from forge_jupyter.testing import Turn
from tests.notebook.nb_kernel import forge_kernel

SECRET = "b-wrote-this-9931"


@pytest.fixture(scope="module")
def kernel(model_server, tmp_path_factory, pg_cluster):
    db = pg_cluster.create_database()
    shared = db.create_app_role()
    migrate(db.owner_dsn, (shared.name,))
    with PostgresStore(shared.dsn, tenant_id="b") as b:
        session = b.create_session(SessionInfo(name="b-private"))
        message = Message(session_id=session.id, role="user", status="completed",
                          completed_at=now())
        b.write([PutMessage(message), PutPart(TextPart(
            session_id=session.id, message_id=message.id, text=SECRET, time_end=now())),
            AppendMessage(session.id, message.id)])
    k = forge_kernel(model_server.openai_base, tmp_path_factory.mktemp("nbpg"),
                     {"FORGE_DB": shared.dsn, "FORGE_TENANT": "a"})
    yield k
    k.close()
    pg_cluster.drop_database(db)


def test_forge_sql_and_the_frames_magics_work_on_postgres(kernel, server):
    server.add(Turn.text("answered on postgres", usage=(30, 4)))
    r = kernel.run("%%forge\ncount me")
    assert r.status == "ok", r.error
    r = kernel.run("_r = %forge sql SELECT role, count(*) AS n FROM messages GROUP BY ALL "
                   "ORDER BY ALL\nprint(_r.to_dict('records'))")
    assert r.status == "ok", r.error
    assert r.stdout.strip() == "[{'role': 'assistant', 'n': 1}, {'role': 'user', 'n': 1}]"
    rows = {"sessions": 1, "history": 2, "cost": 1, "cost --by day": 1, "cost --by model": 1}
    for command, n in rows.items():
        r = kernel.run(f"_r = %forge {command}\nprint(len(_r))")
        assert r.status == "ok", (command, r.error)
        assert r.stdout.strip() == str(n), command


@pytest.mark.parametrize("query", [
    "SELECT * FROM parts",
    "SELECT * FROM public.part",
    "SELECT set_config('forge.tenant', 'b', false), * FROM part",
    "WITH p AS (SELECT * FROM part) SELECT * FROM p",
])
def test_what_the_person_types_never_shows_tenant_b(kernel, query):
    r = kernel.run(f"_r = %forge sql {query}\nprint(_r.to_string())")
    assert SECRET not in r.stdout and SECRET not in r.text
