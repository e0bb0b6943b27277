"""Permissions and approvals through the real loop: what the model sees, asks, answers."""

from __future__ import annotations

import threading

import pytest

from forge_jupyter.bus import ApprovalRequested
from forge_jupyter.errors import ApprovalPending
from forge_jupyter.session.approval import Answer
from forge_jupyter.testing import Turn, delay, tool_call
from forge_jupyter.tools.permission import Permissions, Rule


def _tools(forge):
    changed = []

    @forge.tool(mutating=True)
    def save(name: str) -> str:
        """Save something (mutating)."""
        changed.append(name)
        return f"saved {name}"

    @forge.tool
    def look(name: str) -> str:
        """Look at something (read-only)."""
        return f"looked at {name}"

    return changed


def _events(forge, sid, prefix="permission"):
    forge.flush()
    return [(e.type, e.actor, e.data) for e in forge.store.events(sid).items if e.type.startswith(prefix)]


def test_rules_last_match_wins_inside_a_layer_and_later_layers_only_narrow():
    p = Permissions([("agent", [Rule("*", "*", "allow"), Rule("write", "*", "ask"),
                                Rule("write", "data/*", "allow")]),
                     ("session", [Rule("write", "secret*", "deny")]),
                     ("prompt", [Rule("write", "data/*", "allow")])])
    assert p.evaluate("write", "data/x.csv").action == "allow"
    assert p.evaluate("write", "notes.txt").action == "ask"
    assert p.evaluate("write", "secret.txt").action == "deny"
    widened = Permissions([("agent", [Rule("python", "*", "deny")]),
                           ("prompt", [Rule("python", "*", "allow")])])
    assert widened.evaluate("python", "1+1").action == "deny"  # a later layer cannot widen
    assert widened.denied_for_all("python")
    partly = Permissions([("agent", [Rule("write", "*", "deny"), Rule("write", "data/*", "allow")])])
    assert not partly.denied_for_all("write")
    assert partly.evaluate("write", "data/x.csv").action == "allow"


def test_a_denied_tool_never_appears_in_a_request(make_forge, server):
    server.add(Turn.text("a"), Turn.text("b"))
    forge = make_forge(permissions=[Rule("save", "*", "deny")])
    _tools(forge)
    s = forge.session("s")
    s.prompt("one")
    s.prompt("two", permissions=[Rule("look", "*", "deny")])
    assert server.requests[0].tools == ["look"]
    assert server.requests[1].tools == []


def test_plan_agent_denies_mutating_tools(make_forge, server):
    server.add(Turn.text("planned"))
    forge = make_forge()
    _tools(forge)
    forge.session("s").prompt("plan it", agent="plan")
    assert server.requests[0].tools == ["look"]
    assert "PLAN mode" in server.requests[0].messages[0]["content"]


def test_an_ask_with_no_one_to_answer_is_denied_at_once(make_forge, server):
    server.add(Turn([tool_call("save", {"name": "x"})]), Turn.text("understood"))
    forge = make_forge()
    changed = _tools(forge)
    answer = forge.session("s").prompt("save x")
    assert answer.text == "understood" and changed == []
    call = forge.session("s").messages()[1].tool_parts[0]
    assert call.state == "error" and "no approval handler is registered" in call.error
    types = [t for t, _, _ in _events(forge, answer.session_id)]
    assert types == ["permission.asked", "permission.answered"]


def test_approve_once_lets_the_call_run_and_is_recorded(make_forge, server):
    server.add(Turn([tool_call("save", {"name": "x"})]), Turn.text("done"))
    forge = make_forge()
    changed = _tools(forge)
    forge.on_approval(lambda request: None)  # someone will answer later
    s = forge.session("s")
    forge.bus.subscribe(lambda e: threading.Thread(target=s.approve, args=(e.request_id, "once"),
                                                   kwargs={"by": "alice"}).start(),
                        types=ApprovalRequested)
    assert s.prompt("save x").text == "done"
    assert changed == ["x"]
    events = _events(forge, s.id)
    assert [(t, a) for t, a, _ in events] == [("permission.asked", "agent"), ("permission.answered", "alice")]
    assert events[0][2]["tool"] == "save" and events[1][2]["answer"] == "once"


def test_deny_with_a_reason_reaches_the_model_and_the_run_continues(make_forge, server):
    server.add(Turn([tool_call("save", {"name": "x"})]), Turn.text("ok, I won't"))
    forge = make_forge()
    changed = _tools(forge)
    forge.on_approval(lambda r: Answer("deny", "not on Fridays", "bob"))
    answer = forge.session("s").prompt("save x")
    assert answer.text == "ok, I won't" and changed == []
    tool_msg = [m for m in server.requests[1].messages if m.get("role") == "tool"][0]
    assert tool_msg["content"] == "Error: The user denied this save call: not on Fridays"


def test_allow_for_the_session_stops_asking_for_that_tool(make_forge, server):
    server.add(Turn([tool_call("save", {"name": "a"})]), Turn.text("1"),
               Turn([tool_call("save", {"name": "b"})]), Turn.text("2"))
    forge = make_forge()
    changed = _tools(forge)
    asked = []
    forge.on_approval(lambda r: (asked.append(r.id), "session")[1])
    s = forge.session("s")
    s.prompt("save a")
    s.prompt("save b")
    assert changed == ["a", "b"] and len(asked) == 1
    assert [(g.tool, g.pattern, g.action) for g in forge.approvals.granted(s.id)] == [
        ("save", "*", "allow")]
    assert "grants" not in s.refresh().metadata  # this kernel's answer, never the store's


def test_a_grant_lasts_for_the_kernel_and_no_stored_row_grants(make_forge, server):
    # "Allow for session" lives with the process that gave it: a restarted kernel (a new Forge
    # on the same store) asks again, and grants written into the session's row — by another
    # program, a copied store, an older version — grant nothing, however they are spelled.
    server.add(Turn([tool_call("save", {"name": "a"})]), Turn.text("1"),
               Turn([tool_call("save", {"name": "b"})]), Turn.text("2"),
               Turn([tool_call("save", {"name": "c"})]), Turn.text("3"))
    first = make_forge(db="duckdb")
    _tools(first)
    first.on_approval(lambda r: "session")
    s = first.session("s")
    s.prompt("save a")
    info = first.store.get_session(s.id)
    planted = [{"tool": "save", "pattern": "*", "action": "allow"}, "save=allow", "*:*=allow"]
    first.store.update_session(info.model_copy(update={"metadata": {**info.metadata,
                                                                    "grants": planted}}))
    again = make_forge(db="duckdb")
    changed = _tools(again)
    asked = []
    again.on_approval(lambda r: (asked.append(r.tool), "once")[1])
    again.session(s.id).prompt("save b")
    again.session(s.id).prompt("save c")
    assert asked == ["save", "save"] and changed == ["b", "c"]


def test_a_prompt_is_refused_while_an_approval_is_pending(make_forge, server):
    server.add(Turn([tool_call("save", {"name": "x"})]), Turn.text("done"))
    forge = make_forge()
    _tools(forge)
    forge.on_approval(lambda r: None)
    s = forge.session("s")
    seen = threading.Event()
    forge.bus.subscribe(lambda e: seen.set(),
                        types=ApprovalRequested)
    worker = threading.Thread(target=s.prompt, args=("save x",))
    worker.start()
    assert seen.wait(10)
    with pytest.raises(ApprovalPending, match="waiting for your approval"):
        s.prompt("something else")
    s.approve(s.pending_approvals[0].id, "once")
    worker.join(20)
    assert not worker.is_alive()


def test_custom_tools_are_allowed_by_default(make_forge, server):
    server.add(Turn([tool_call("look", {"name": "y"})]), Turn.text("seen"))
    forge = make_forge()
    _tools(forge)
    forge.session("s").prompt("look")
    assert forge.session("s").messages()[1].tool_parts[0].output == "looked at y"


def test_a_slow_approval_does_not_block_other_work(make_forge, server):
    server.add(Turn([delay(0.01), tool_call("save", {"name": "z"})]), Turn.text("fine"))
    forge = make_forge()
    _tools(forge)
    forge.on_approval(lambda r: None)
    s = forge.session("s")
    forge.bus.subscribe(lambda e: threading.Timer(0.3, s.approve, (e.request_id, "once")).start(),
                        types=ApprovalRequested)
    assert s.prompt("save z").text == "fine"


def test_two_answers_racing_one_wins_and_is_recorded_once(make_forge, server):
    """The widget and the side panel clicked at the same moment: one answer counts, the other
    is told the request was already answered — never two `permission.answered` events."""
    from forge_jupyter.errors import NotFound

    server.add(Turn([tool_call("save", {"name": "x"})]), Turn.text("done"))
    forge = make_forge()
    changed = _tools(forge)
    forge.on_approval(lambda r: None)
    s = forge.session("s")
    outcomes: list[str] = []
    start = threading.Barrier(8)

    def click(answer: str, by: str, request_id: str) -> None:
        start.wait()
        try:
            s.approve(request_id, answer, by=by)
            outcomes.append(by)
        except NotFound:
            outcomes.append("refused")

    def on_request(e) -> None:
        for i in range(8):
            threading.Thread(target=click, args=("once", f"clicker{i}", e.request_id)).start()

    forge.bus.subscribe(on_request, types=ApprovalRequested)
    assert s.prompt("save x").text == "done"
    assert changed == ["x"]
    assert sorted(o == "refused" for o in outcomes) == [False] + [True] * 7
    answered = [e for e in _events(forge, s.id) if e[0] == "permission.answered"]
    assert len(answered) == 1 and answered[0][1] in outcomes


# -- who decided: a handler's decision is its own; a fallback handler waits for the person -----


def test_a_handlers_decision_is_recorded_as_the_handlers_not_the_persons(make_forge, server):
    from forge_jupyter.render import decision_text

    server.add(Turn([tool_call("save", {"name": "x"})]), Turn.text("saved"),
               Turn([tool_call("save", {"name": "y"})]), Turn.text("not saved"))
    forge = make_forge()
    _tools(forge)

    def allow_saves(request):
        return "once"

    stop = forge.on_approval(allow_saves)
    s = forge.session("s")
    s.prompt("save x")
    stop()
    forge.on_approval(lambda request: "deny")  # no name of its own
    s.prompt("save y")
    first, second = (m.tool_parts[0] for m in s.messages() if m.tool_parts)
    assert decision_text(first.metadata["decision"]) == "Allowed once by allow_saves"
    assert decision_text(second.metadata["decision"]) == "Denied by a handler"
    answered = [a for t, a, _ in _events(forge, s.id) if t == "permission.answered"]
    assert answered == ["allow_saves", "a handler"]
    tool_msg = [m for m in server.requests[3].messages if m.get("role") == "tool"][-1]
    assert tool_msg["content"] == "Error: An approval handler denied this save call."


def test_a_fallback_handler_leaves_the_ask_to_a_live_view_and_answers_once_it_goes(
        make_forge, server):
    from forge_jupyter.notebook import answering

    server.add(Turn([tool_call("save", {"name": "x"})]), Turn.text("saved"))
    forge = make_forge()
    changed = _tools(forge)
    offered = []

    def answer_approvals(request):
        offered.append(request.tool)
        return "once"

    forge.on_approval(answer_approvals, fallback=True)
    view_gone = answering.listen(forge)  # a live widget: a person can click
    waited: list[bool] = []

    def on_ask(event):  # the view falls back to text with the ask unanswered
        def later():
            waited.append(offered == [])  # not answered by the handler while the view was live
            view_gone()
        threading.Timer(0.3, later).start()

    forge.bus.subscribe(on_ask, types=ApprovalRequested)
    s = forge.session("s")
    assert s.prompt("save x").text == "saved"
    assert waited == [True] and offered == ["save"] and changed == ["x"]
    call = s.messages()[1].tool_parts[0]
    assert call.metadata["decision"]["by"] == "answer_approvals"


def test_a_fallback_handler_answers_at_once_where_no_view_is_live(make_forge, server):
    server.add(Turn([tool_call("save", {"name": "x"})]), Turn.text("saved"))
    forge = make_forge()
    changed = _tools(forge)
    forge.on_approval(lambda request: "once", fallback=True)
    assert forge.session("s").prompt("save x").text == "saved" and changed == ["x"]
