"""Fork: a copy of the pointers up to a finished message; bodies shared; isolated continuations."""

from __future__ import annotations

import pytest

from forge_jupyter.errors import MessageRunning
from tests.session.support import contents, say, shown, words


@pytest.mark.parametrize("db", [":memory:", "duckdb"])
def test_a_fork_and_its_parent_each_see_only_their_own_continuation(make_forge, server, db):
    server.add(say(words("a0")), say(words("a1")))
    forge = make_forge(db)
    parent = forge.session("parent")
    parent.prompt(words("q0"))
    parent.prompt(words("q1"))
    at = parent.messages()[1]  # the first answer

    child = parent.fork(at=at.id, name="child")

    # The child's timeline is the parent's pointers up to `at`: the same bodies, not copies.
    assert [m.id for m in child.messages()] == [m.id for m in parent.messages()[:2]]
    assert (child.info.forked_from_session, child.info.forked_from_message) == (parent.id, at.id)
    server.add(say(words("parent-next")), say(words("child-next")),
               say(words("parent-again")), say(words("child-again")))
    parent.prompt(words("P2"))
    child.prompt(words("C2"))
    parent.prompt(words("P3"))
    child.prompt(words("C3"))

    p2, c2, p3, c3 = server.requests[2:6]
    assert contents(p2) == [("user", words("q0")), ("assistant", words("a0")), ("user", words("q1")),
                            ("assistant", words("a1")), ("user", words("P2"))]
    assert contents(c2) == [("user", words("q0")), ("assistant", words("a0")), ("user", words("C2"))]
    assert "C2-0" not in shown(p3) and "child-next-0" not in shown(p3)
    assert "P2-0" not in shown(c3) and "parent-next-0" not in shown(c3) and "q1-0" not in shown(c3)
    assert "child-next-0" in shown(c3) and "parent-next-0" in shown(p3)

    parent_ids = {m.id for m in parent.messages()}
    child_ids = {m.id for m in child.messages()}
    assert parent_ids & child_ids == {m.id for m in parent.messages()[:2]}
    assert len(parent_ids) == 8 and len(child_ids) == 6


def test_forking_at_a_running_message_is_refused(make_forge, server, rows):
    server.add(say("a0"))
    forge = make_forge()
    session = forge.session("s")
    session.prompt("q0")
    w = rows(forge.store, session.id)
    asked = w.user("q1")
    running = w.assistant(asked, "half", status="running")
    with pytest.raises(MessageRunning):
        session.fork(at=running.id)
    with pytest.raises(MessageRunning):
        session.fork()  # the default, the last message, is the running one
    assert [s.id for s in forge.store.list_sessions().items] == [session.id]


def test_a_fork_of_a_compacted_session_starts_at_the_same_boundary(make_forge, server):
    server.add(say(words("a0")), say(words("a1")), say("## Goal\n" + words("S")),
               say(words("child-answer")))
    forge = make_forge()
    session = forge.session("s")
    session.prompt(words("q0"))
    session.prompt(words("q1"))
    session.compact()
    child = session.fork()
    child.prompt(words("C"))
    seen = shown(server.requests[-1])
    assert "S-0" in seen and "q1-0" in seen and "q0-0" not in seen
