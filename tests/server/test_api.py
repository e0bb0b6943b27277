"""The REST API of the server extension (/forge/api/), served by a real Jupyter server over a
real DuckDB file that two tenants share (conftest.py). Expected values are read back through
the store's own API, never through the SQL the server runs."""

from __future__ import annotations

import base64
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from forge_jupyter.session.view import is_summary
from tests.server.api_helpers import (
    LONG,
    NOTEBOOK,
    ODD_TITLE,
    TENANT,
    every_page,
    every_session,
    get,
    refused,
    steps_of,
    superseded,
    totals_of,
)

SESSIONS = ("sessions",)


async def test_sessions_page_newest_first_to_the_end_with_tree_notebook_and_totals(
        jp_fetch, history):
    seen, pages = await every_page(jp_fetch, SESSIONS, "sessions", limit=2)
    store = history.store()
    ids = [s["id"] for s in seen]
    # every live session of the server's tenant once; not the deleted one, nothing of bob's
    assert sorted(ids) == sorted(every_session(store)) and len(ids) == len(set(ids)) == 4
    assert pages == 2
    assert history.ids["gone"] not in ids and history.ids["secret"] not in ids
    assert [s["updated"] for s in seen] == sorted((s["updated"] for s in seen), reverse=True)
    assert seen[0]["id"] == history.ids["long"]  # written last

    by = {s["id"]: s for s in seen}
    analysis, fork = by[history.ids["analysis"]], by[history.ids["fork"]]
    info = store.get_session(fork["id"])
    assert (fork["parent_id"], fork["relation"]) == (analysis["id"], "fork")
    assert fork["forked_from_message_id"] == info.forked_from_message is not None
    assert (analysis["parent_id"], analysis["relation"], analysis["children"]) == (None, None, 1)
    assert analysis["notebook"] == NOTEBOOK  # the session's own record
    assert fork["notebook"] == NOTEBOOK  # a fork records none: its prompts' cells tell
    assert by[history.ids["long"]]["notebook"] is None
    assert analysis["title"] == "What is 2+3?" and fork["title"] == "What is 2+3? (fork)"
    assert by[history.ids["odd"]]["title"] == ODD_TITLE
    assert analysis["models"] == ["openai/gpt-4o-mini"]
    for sid in (analysis["id"], fork["id"]):
        expected = totals_of(steps_of(store, sid))
        row = by[sid]
        assert row["cost"] == expected["cost"] and row["steps"] == expected["steps"]
        assert row["tokens"] == {"input": expected["input_tokens"],
                                 "output": expected["output_tokens"]}
        assert row["messages"] == store.timeline_length(sid)
        assert row["created"] == pytest.approx(store.get_session(sid).created_at, abs=1e-5)

    first = await get(jp_fetch, *SESSIONS)  # the default page holds them all
    assert [s["id"] for s in first["sessions"]] == ids and first["next_cursor"] is None


@pytest.mark.parametrize("q, names", [
    ("100%", ["odd"]), ("%", ["odd"]), ("sure_thing", ["odd"]), ("_", ["odd"]),
    ("SURE_THING", ["odd"]), ("'quoted'", ["odd"]), ("--", ["odd"]), (";", ["odd"]),
    ("数据", ["odd"]), ("café", ["odd"]), ("ünïcode", ["odd"]),
    ("what is 2+3", ["analysis", "fork"]),  # the fork's timeline holds that prompt too
    ("forked-3", ["fork"]), ("needle-IN-text", ["long"]), ("long", ["long"]),
    ("bob only", []), ("x' OR '1'='1", []), ("%' --", []), ("\\", []), ("%%", []),
    ("' OR 1=1; DROP TABLE session; --", []), ("*", []), ("[a-z]", []),
])
async def test_search_finds_titles_names_and_message_text_literally(jp_fetch, history, q, names):
    found, _ = await every_page(jp_fetch, SESSIONS, "sessions", q=q, limit=1)
    assert sorted(s["id"] for s in found) == sorted(history.ids[n] for n in names)
    assert len(every_session(history.store())) == 4  # nothing was written or dropped


async def test_a_blank_search_lists_everything(jp_fetch, history):
    found, _ = await every_page(jp_fetch, SESSIONS, "sessions", q="   ")
    assert len(found) == 4


@pytest.mark.parametrize("name, limit", [("analysis", 3), ("fork", 1), ("long", 100)])
async def test_messages_page_through_the_whole_history_with_superseded_and_boundaries(
        jp_fetch, history, name, limit):
    sid = history.ids[name]
    store = history.store()
    timeline = store.read_timeline(sid)
    got, pages = await every_page(jp_fetch, (*SESSIONS, sid, "messages"), "messages",
                                  limit=limit)
    assert pages == max(1, -(-len(timeline) // limit))
    # every message once, in timeline order, with its parts exactly as stored
    assert [m["id"] for m in got] == [m.id for m in timeline]
    assert [m["pos"] for m in got] == list(range(len(timeline)))
    for shown, stored in zip(got, timeline, strict=True):
        assert shown["parts"] == [p.to_json() for p in stored.parts]
        assert {k: shown[k] for k in stored.to_json()} == stored.to_json()
    marks = superseded(store, sid)
    assert [m["superseded"] for m in got] == [marks[m.id] for m in timeline]
    assert [m["boundary"] for m in got] == [is_summary(m) for m in timeline]

    last = await get(jp_fetch, *SESSIONS, sid, "messages", limit=limit)
    summaries = [(i, m) for i, m in enumerate(timeline) if is_summary(m)]
    assert [(b["pos"], b["message_id"], b["request_message_id"]) for b in last["boundaries"]] == [
        (i, m.id, m.parent_id) for i, m in summaries]
    if name == "long":
        assert len(got) == LONG and not any(marks.values())
        assert got[101]["parts"][0]["text"] == "the needle-in-text is here"
    else:  # the compaction: earlier messages superseded, the kept turn and after visible
        assert any(marks.values()) and not all(marks.values())
        [boundary] = last["boundaries"]
        assert timeline[boundary["request_pos"]].id == boundary["request_message_id"]
        assert boundary["auto"] is False and boundary["tokens_before"] > 0


async def test_one_session_and_the_cost_totals(jp_fetch, history):
    store = history.store()
    sid = history.ids["analysis"]
    one = await get(jp_fetch, *SESSIONS, sid)
    listed = {s["id"]: s for s in (await get(jp_fetch, *SESSIONS))["sessions"]}
    assert one["session"] == listed[sid]
    assert one["totals"] == {**totals_of(steps_of(store, sid)),
                             "messages": store.timeline_length(sid)}

    zone = ZoneInfo("Pacific/Kiritimati")  # UTC+14: "today" there is not today in UTC
    costs = await get(jp_fetch, "costs", session=sid, notebook=NOTEBOOK, tz=zone.key)
    every = [step for s in every_session(store) for step in steps_of(store, s)]
    asked = {m.id: m for s in every_session(store) for m in store.read_timeline(s)}
    midnight = datetime.now(zone).replace(hour=0, minute=0, second=0, microsecond=0)
    assert costs["session"] == totals_of(steps_of(store, sid))
    assert costs["notebook"] == totals_of([
        (m, p) for m, p in every if (asked[m.parent_id].origin or {}).get("notebook") == NOTEBOOK])
    assert costs["today"] == totals_of([
        (m, p) for m, p in every if p.created_at >= midnight.timestamp()])
    assert costs["all"] == totals_of(every)  # the tenant's: bob's call is not in it
    assert costs["notebook"]["steps"] < costs["all"]["steps"]

    plain = await get(jp_fetch, "costs")
    assert plain["session"] is None and plain["notebook"] is None
    assert plain["all"] == costs["all"]
    nowhere = await get(jp_fetch, "costs", notebook="no/such.ipynb")
    assert nowhere["notebook"] == {"cost": 0, "input_tokens": 0, "output_tokens": 0,
                                   "turns": 0, "steps": 0, "unpriced_steps": 0}


async def test_another_tenants_deleted_and_unknown_sessions_are_all_just_not_found(
        jp_fetch, history):
    unknown = "ses_01a22d744de000006GZJWmOP1X"
    answers = []
    for sid in (history.ids["secret"], history.ids["gone"], unknown, "x" * 500,
                "' OR tenant_id <> 'alice' --", "%", "ses_%"):
        answers.append(await refused(jp_fetch, 404, *SESSIONS, sid))
        answers.append(await refused(jp_fetch, 404, *SESSIONS, sid, "messages"))
        answers.append(await refused(jp_fetch, 404, "costs", params={"session": sid}))
    # one answer for all: nothing tells bob's session from one that never existed
    assert {a["message"] for a in answers} == {answers[0]["message"]}
    assert "GET /forge/api/sessions" in answers[0]["message"]
    assert history.ids["secret"] not in str(answers) and "bob" not in str(answers)


async def test_an_id_outside_the_grammar_is_not_found_wherever_it_is_sent(jp_fetch, history):
    """The REST API checks ids with the validator every entry uses (ids.is_id)."""
    answers = []
    for sid in ("../../precious", "ses_a/b", "/tmp/x", "ses_a\\b", "ses_x.y", "..",
                "ses_" + "a" * 41, "msg_" + history.ids["secret"][4:]):
        answers.append(await refused(jp_fetch, 404, "costs", params={"session": sid}))
    for sid in ("ses_x.y", "ses_a%5Cb", "ses_" + "a" * 41, "ses_%2E%2E"):
        answers.append(await refused(jp_fetch, 404, *SESSIONS, sid))
    assert {a["message"] for a in answers} == {answers[0]["message"]}


def _b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode()


@pytest.mark.parametrize("where, params, says", [
    ("sessions", {"cursor": "not a cursor!"}, "next_cursor"),
    ("sessions", {"cursor": _b64("nonsense")}, "next_cursor"),
    ("sessions", {"cursor": _b64("12:")}, "next_cursor"),
    ("sessions", {"cursor": _b64("1' OR '1'='1:ses_x")}, "next_cursor"),
    ("sessions", {"cursor": "\u00e9t\u00e9"}, "next_cursor"),
    ("messages", {"cursor": "abc"}, "next_cursor"),
    ("messages", {"cursor": "-1"}, "next_cursor"),
    ("messages", {"cursor": "1.5"}, "next_cursor"),
    ("messages", {"cursor": "1e3"}, "next_cursor"),
    ("messages", {"cursor": "0 OR 1=1 --"}, "next_cursor"),
    ("messages", {"cursor": "99999"}, "past the end"),
    ("sessions", {"limit": "0"}, "limit must be a whole number from 1 to 200"),
    ("sessions", {"limit": "201"}, "limit"),
    ("sessions", {"limit": "-5"}, "limit"),
    ("sessions", {"limit": "ten"}, "limit"),
    ("messages", {"limit": "501"}, "from 1 to 500"),
    ("messages", {"limit": "1e2"}, "limit"),
    ("sessions", {"q": "x" * 201}, "at most 200 characters"),
    ("costs", {"tz": "../../../etc/passwd"}, "time zone name"),
    ("costs", {"tz": "Nowhere/City"}, "no time zone this server knows"),
    ("costs", {"tz": "UTC; DROP TABLE session"}, "time zone name"),
])
async def test_bad_parameters_are_400_saying_what_to_send(jp_fetch, history, where, params, says):
    path = {"sessions": SESSIONS, "costs": ("costs",),
            "messages": (*SESSIONS, history.ids["analysis"], "messages")}[where]
    answer = await refused(jp_fetch, 400, *path, params=params)
    assert says in answer["message"]


@pytest.mark.parametrize("path", [SESSIONS, ("costs",), ("sessions", "SID"),
                                  ("sessions", "SID", "messages")])
async def test_no_token_or_a_wrong_one_is_403_and_writing_methods_405(jp_fetch, history, path):
    path = tuple(history.ids["analysis"] if p == "SID" else p for p in path)
    for headers in ({"Authorization": ""}, {"Authorization": "token wrong-token"},
                    {"Authorization": "Bearer wrong-token"}):
        answer = await refused(jp_fetch, 403, *path, headers=headers)
        assert "What is 2+3" not in str(answer)
    await refused(jp_fetch, 403, *path, headers={"Authorization": ""},
                  params={"token": "wrong-token"})
    for method in ("POST", "PUT", "PATCH", "DELETE"):
        body = "{}" if method in ("POST", "PUT", "PATCH") else None
        await refused(jp_fetch, 405, *path, method=method, body=body)
    assert len(every_session(history.store())) == 4
    assert TENANT == "alice"


async def test_the_sessions_a_notebook_created_are_found_by_its_path(jp_fetch, history):
    """The panel reads a notebook's chat while its kernel is busy: by the notebook's path."""
    page = await get(jp_fetch, *SESSIONS, notebook=NOTEBOOK)
    # its own session, not the fork (which names the notebook only through its prompts)
    assert [s["id"] for s in page["sessions"]] == [history.ids["analysis"]]
    assert (await get(jp_fetch, *SESSIONS, notebook="elsewhere.ipynb"))["sessions"] == []
    assert len((await get(jp_fetch, *SESSIONS, notebook=""))["sessions"]) == 4  # no filter


async def test_the_record_of_a_turn_is_its_cells_record_read_from_the_store(jp_fetch, history):
    """What a %%forge cell missed when its page was closed: the record, by its prompt's pos."""
    sid = history.ids["analysis"]
    page = await get(jp_fetch, "sessions", sid, "messages")
    prompt = next(m for m in page["messages"] if m["role"] == "user")
    answer = next(m for m in page["messages"] if m["role"] == "assistant" and m["pos"] > prompt["pos"])
    texts = [p["text"] for m in page["messages"] if m["role"] == "assistant" and m["pos"] > prompt["pos"]
             for p in m["parts"] if p["type"] == "text" and p.get("text")]
    record = await get(jp_fetch, "sessions", sid, "record", pos=str(prompt["pos"]))
    assert record["done"] is True
    assert record["prompt"]["cell_id"] == "c1"
    assert texts and texts[0].strip()[:20] in record["data"]["text/plain"]  # its answer
    assert record["data"]["text/html"]
    refusal = await refused(jp_fetch, 400, "sessions", sid, "record", params={"pos": str(answer["pos"])})
    assert "not a prompt" in refusal["message"]
