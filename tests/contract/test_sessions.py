"""Sessions: create, find by id or name, list, update, and the tombstone a delete leaves."""

from __future__ import annotations

import pytest

from forge_jupyter.errors import DuplicateId, NotFound, SessionDeleted
from forge_jupyter.message import SessionInfo
from tests.contract.contract_helpers import assert_same, new_session, user_turn


def test_created_session_reads_back_whole(store):
    info = SessionInfo(name="analysis", title="Sales", agent="plan", model="openai/gpt-4o",
                       directory="/tmp/nb", parent_id="ses_parent", metadata={"k": ["v", 1]})
    store.create_session(info)
    assert_same(store.get_session(info.id), info)


def test_duplicate_session_id_conflicts(store):
    info = new_session(store, "one")
    with pytest.raises(DuplicateId):
        store.create_session(SessionInfo(id=info.id, name="two"))
    assert store.get_session(info.id).name == "one"


def test_session_name_is_unique_among_live_sessions(store):
    new_session(store, "taken")
    with pytest.raises(DuplicateId):
        new_session(store, "taken")


def test_name_of_a_deleted_session_can_be_used_again(store):
    old = new_session(store, "reused")
    store.delete_session(old.id)
    fresh = new_session(store, "reused")
    assert store.find_session("reused").id == fresh.id


def test_find_session_by_id_or_by_name(store):
    info = new_session(store, "by-name")
    assert store.find_session(info.id).id == info.id
    assert store.find_session("by-name").id == info.id
    with pytest.raises(NotFound):
        store.find_session("nobody")


def test_deleted_session_is_reported_as_deleted_not_missing(store):
    info = new_session(store, "gone")
    store.delete_session(info.id)
    with pytest.raises(SessionDeleted):
        store.get_session(info.id)
    with pytest.raises(SessionDeleted):
        store.find_session(info.id)
    with pytest.raises(NotFound):
        store.find_session("gone")


def test_missing_session_not_found(store):
    with pytest.raises(NotFound):
        store.get_session("ses_missing")
    with pytest.raises(NotFound):
        store.timeline("ses_missing")
    with pytest.raises(NotFound):
        store.delete_session("ses_missing")


def test_list_sessions_pages_to_the_end_oldest_first_without_deleted_ones(store):
    made = [new_session(store, f"s{i}") for i in range(7)]
    store.delete_session(made[3].id)
    seen, cursor, pages = [], None, 0
    while True:
        page = store.list_sessions(cursor=cursor, limit=2)
        seen += [s.id for s in page.items]
        pages += 1
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert seen == [s.id for s in made if s.id != made[3].id]
    assert pages == 3


def test_update_session_rewrites_its_fields_and_bumps_updated_at(store):
    info = new_session(store, "before", title="t0")
    changed = info.model_copy(update={
        "name": "after", "title": "t1", "agent": "plan", "model": "m", "directory": "/d",
        "metadata": {"a": 1},
        # not the lineage nor the creation time: update_session leaves those alone
        "created_at": 1.0, "forked_from_session": "ses_bogus", "parent_id": "ses_bogus",
    })
    stored = store.update_session(changed)
    again = store.get_session(info.id)
    assert_same(stored, again)
    assert (again.name, again.title, again.agent, again.model, again.directory, again.metadata) == (
        "after", "t1", "plan", "m", "/d", {"a": 1})
    assert again.created_at == pytest.approx(info.created_at, abs=1e-6)
    assert again.forked_from_session is None and again.parent_id is None
    assert again.updated_at >= info.updated_at
    assert store.find_session("after").id == info.id


def test_update_session_to_a_taken_name_conflicts(store):
    new_session(store, "first")
    second = new_session(store, "second")
    with pytest.raises(DuplicateId):
        store.update_session(second.model_copy(update={"name": "first"}))
    assert store.get_session(second.id).name == "second"


def test_update_of_a_deleted_or_missing_session_rejected(store):
    info = new_session(store)
    store.delete_session(info.id)
    with pytest.raises(SessionDeleted):
        store.update_session(info.model_copy(update={"title": "late"}))
    with pytest.raises(NotFound):
        store.update_session(SessionInfo(title="nobody"))


def test_writes_bump_the_session_updated_at(store):
    info = new_session(store)
    user_turn(store, info)
    assert store.get_session(info.id).updated_at >= info.updated_at
