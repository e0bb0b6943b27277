"""The side panel's comm ``forge.panel`` (docs/api.md), driven through a real kernel: this test
is the panel — it opens comms to the kernel's target, sends JSON on the shell channel and
reads what the kernel publishes on iopub, as the labextension does over the websocket."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from typing import Any

import pytest

from forge_jupyter.testing import Turn, delay, text, tool_call
from tests.notebook.panel_kernel import TARGET, PanelKernel
from tests.tool_cells import NOTE_TOOL

XSS = ['<img src=x onerror=alert(1)>', '<script>alert("x")</script>',
       '[click](javascript:alert(1))', '<svg/onload=alert(1)>', '"><iframe srcdoc="<b>">']


@pytest.fixture(scope="module")
def kernel(model_server, tmp_path_factory):
    root = tmp_path_factory.mktemp("panel")
    k = PanelKernel({"FORGE_MODEL": "openai/gpt-4o-mini", "FORGE_API_BASE": model_server.openai_base,
                     "FORGE_API_KEY": "sk-fake", "FORGE_DB": str(root / "forge.duckdb"),
                     "FORGE_WIDGET": "off", "FORGE_TENANT": "acme"}, root)
    loaded = k.run("%load_ext forge_jupyter\n" + NOTE_TOOL)
    assert loaded.status == "ok", loaded.text
    yield k
    k.close()


def of(messages: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [m for m in messages if m["kind"] == kind]


def ops(messages: list[dict[str, Any]], op: str) -> list[dict[str, Any]]:
    return [o for m in messages if m["kind"] in ("turn", "batch") for o in m["ops"] if o["op"] == op]


def texts(messages: list[dict[str, Any]]) -> dict[str, str]:
    """The text parts as a panel folds the turn's ops: rows, then the deltas after them."""
    parts: dict[str, dict[str, Any]] = {}
    for m in messages:
        if m["kind"] not in ("turn", "batch"):
            continue
        for o in m["ops"]:
            if o["op"] == "part":
                parts[o["part"]["id"]] = dict(o["part"])
            elif o["op"] == "delta":
                part = parts.setdefault(o["id"], {"id": o["id"], "type": "text", "text": ""})
                part[o["field"]] = (part.get(o["field"]) or "") + o["text"]
    return {k: p.get("text") or "" for k, p in parts.items() if p.get("type") == "text"}


def one_turn(messages: list[dict[str, Any]]) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
    """The turn's start, its batches in order (seq without a gap) and its end."""
    [start] = of(messages, "turn")
    batches = [m for m in of(messages, "batch") if m["turn_id"] == start["turn_id"]]
    assert [b["seq"] for b in batches] == list(range(start["seq"] + 1, start["seq"] + 1 + len(batches)))
    [end] = of(messages, "turn-end")
    assert end["turn_id"] == start["turn_id"]
    return start, batches, end


def test_load_opens_a_comm_to_the_frontend_and_hello_answers_info(kernel):
    # %load_ext opened a comm to the frontend's target (a frontend without it closes it).
    [opened] = kernel.opened
    assert opened["target_name"] == TARGET and opened["data"] == {"protocol": 1}
    comm_id = opened["comm_id"]
    assert kernel.received[comm_id] == []  # nothing is sent before the panel says hello
    [info] = kernel.send(comm_id, {"type": "hello"})
    assert info == {"kind": "info", "protocol": 1, "tenant": "acme", "model": "openai/gpt-4o-mini",
                    "agent": "build", "models": ["openai/gpt-4o-mini"], "agents": ["build", "plan"],
                    "session_id": "", "notebook": "", "live": []}
    kernel.close_panel(comm_id)  # as a frontend without the extension does
    assert kernel.run("1 + 1").results[0]["text/plain"] == "2"


def test_a_forge_cell_streams_into_the_panel_turn_batches_and_end(kernel, server, panel):
    answer = "Hello from the model, streamed in small pieces to the panel."
    server.add(Turn([text(answer, chunk=3)], chunk_delay=0.01))
    r = kernel.run("%%forge\nSay hello")
    assert r.status == "ok" and answer in r.stdout  # the cell itself is unchanged (text mode)
    got = kernel.received[panel][1:]
    start, batches, _end = one_turn(got)
    assert start["origin"] == "cell" and start["prompt"] == "Say hello"
    # listed once the prompt was taken (a refused cell never is): its session is known then
    session_id = start["session_id"]
    assert start["ops"][0]["op"] == "status"
    assert session_id.startswith("ses_") and all(b["session_id"] == session_id for b in batches)
    assert list(texts(got).values()) == [answer]
    assert ops(got, "done")
    # The turn created the notebook's session: a fresh info says so; so does %forge new.
    assert [i["session_id"] for i in of(got, "info")][-1] == session_id
    before = len(kernel.received[panel])
    assert "is now current" in kernel.run("%forge new fresh").stdout
    [info] = of(kernel.received[panel][before:], "info")
    assert info["session_id"].startswith("ses_") and info["session_id"] != session_id
    before = len(kernel.received[panel])
    kernel.run("%config Forge.model = 'openai/gpt-4.1-mini'")
    [info] = of(kernel.received[panel][before:], "info")
    assert (info["model"], info["models"]) == ("openai/gpt-4.1-mini", ["openai/gpt-4.1-mini"])
    kernel.run("%config Forge.model = 'openai/gpt-4o-mini'")


def test_an_ask_in_a_cell_is_answered_from_the_panel(kernel, server, panel):
    server.add(Turn([tool_call("write_note", {"text": "from the panel"})]), Turn.text("Noted."))
    answered: list[str] = []

    def approve(comm_id: str, data: dict[str, Any]) -> None:
        for op in data.get("ops", []) if comm_id == panel else []:
            if op["op"] == "approval" and not answered:
                answered.append(op["request"]["id"])
                kernel.send(panel, {"type": "approve", "request_id": op["request"]["id"],
                                    "answer": "once"}, wait=False)

    r = kernel.run("%%forge\nNote it.", on_comm=approve)
    assert r.status == "ok" and "Noted." in r.stdout
    assert "wrote 'from the panel'" in json.dumps([q.messages for q in server.requests])
    got = kernel.received[panel]
    assert [(o["id"], o["answer"]) for o in ops(got, "answered")] == [(answered[0], "once")]
    assert [o["by"] for o in ops(got, "decision")] == ["panel"]
    # Answering it again: a notice, not an error.
    [notice] = kernel.send(panel, {"type": "approve", "request_id": answered[0], "answer": "deny"})
    assert notice["kind"] == "notice" and "already answered" in notice["message"]


def test_a_question_is_offered_while_a_panel_is_attached_and_answered_there(kernel, server, panel):
    # The question tool (tools/question.py): no widget here (Forge.widget is off), but the
    # attached panel can show the card, so the tool is offered and waits for the panel's answer.
    n = len(server.requests)
    server.add(Turn([tool_call("question", {"question": "Which year?", "options": ["2023", "2024"]})]),
               Turn.text("Using 2023."))
    asked: list[dict[str, Any]] = []

    def answer(comm_id: str, data: dict[str, Any]) -> None:
        for op in data.get("ops", []) if comm_id == panel else []:
            if op["op"] == "approval" and op["request"].get("kind") == "question" and not asked:
                asked.append(op["request"])
                kernel.send(panel, {"type": "answer", "request_id": op["request"]["id"],
                                    "text": "2023"}, wait=False)

    r = kernel.run("%%forge\nAnalyse.", on_comm=answer)
    assert r.status == "ok" and "Using 2023." in r.stdout
    assert "question" in server.requests[n].tools
    assert asked[0]["question"] == "Which year?" and asked[0]["options"] == ["2023", "2024"]
    told = [m for m in server.requests[n + 1].messages if m.get("role") == "tool"]
    assert told[-1]["content"] == "The user answered: 2023"
    [done] = [o for o in ops(kernel.received[panel], "answered") if o["id"] == asked[0]["id"]]
    assert (done["answer"], done["text"], done["by"]) == ("answered", "2023", "panel")
    [notice] = kernel.send(panel, {"type": "answer", "request_id": asked[0]["id"], "text": "again"})
    assert notice["kind"] == "notice" and "already answered" in notice["message"]


def test_a_cell_whose_widget_never_rendered_keeps_its_ask_for_the_panel(kernel, server, panel):
    # A widget frontend that never says ready: after ~1.5 s the cell falls back to text, which
    # denies an ask already waiting when nobody else can answer; a panel attached can.
    server.add(Turn.text("warm"))
    kernel.run("%%forge\nwarm up")  # the ask below then comes well within those 1.5 s
    widgets = "%config Forge.widget = '{0}'\nimport os\nos.environ['FORGE_WIDGET'] = '{0}'"
    kernel.run(widgets.format("auto"))
    server.add(Turn([tool_call("write_note", {"text": "late"})]), Turn.text("Noted late."))
    arrived: list[str] = []  # "ask" and the cell's text, in the order they arrived
    out: list[str] = []
    asked: list[str] = []

    def on_comm(comm_id: str, data: dict[str, Any]) -> None:
        for op in data.get("ops", []) if comm_id == panel else []:
            if op["op"] == "approval":
                asked.append(op["request"]["id"])
                arrived.append("ask")

    def cell(until: Callable[[dict[str, Any]], bool]) -> Callable[[dict[str, Any]], bool]:
        def done(m: dict[str, Any]) -> bool:
            if m["parent_header"].get("msg_id") == msg_id and m["msg_type"] == "stream":
                out.append(m["content"]["text"])
                arrived.append("text")
            return until(m)
        return done

    try:
        msg_id = kernel.kc.execute("%%forge\nNote late.")
        kernel.pump(cell(lambda m: bool(asked)), 60, on_comm)
        time.sleep(2.5)  # past the fallback to text
        kernel.send(panel, {"type": "approve", "request_id": asked[0], "answer": "once"}, wait=False)
        kernel.pump(cell(lambda m: m["msg_type"] == "status" and m["content"]["execution_state"] == "idle"
                         and m["parent_header"].get("msg_id") == msg_id), 60, on_comm)
    finally:
        kernel.run(widgets.format("off"))
    assert arrived.index("ask") < arrived.index("text")  # the ask was waiting when it fell back
    assert "Noted late." in "".join(out)
    assert "wrote 'late'" in json.dumps([q.messages for q in server.requests])
    assert [o["answer"] for o in ops(kernel.received[panel], "answered")] == ["once"]


def test_stop_from_the_panel_ends_a_running_turn(kernel, server, panel):
    server.add(Turn([text("Working on it "), delay(30), text("NEVER SHOWN")]))
    stopped: list[str] = []

    def stop(comm_id: str, data: dict[str, Any]) -> None:
        if comm_id == panel and not stopped and "Working" in json.dumps(data.get("ops", [])):
            stopped.append(data["session_id"])
            kernel.send(panel, {"type": "stop", "session_id": data["session_id"]}, wait=False)

    began = time.monotonic()
    kernel.run("%%forge\nTake your time.", on_comm=stop)
    assert stopped and time.monotonic() - began < 20
    got = kernel.received[panel]
    assert "NEVER SHOWN" not in json.dumps(got) and of(got, "turn-end")
    # Stopping again: nothing runs any more.
    [notice] = kernel.send(panel, {"type": "stop", "session_id": stopped[0]})
    assert notice == {"kind": "notice", "message": "Nothing to stop: that run has already ended.",
                      "level": "warning"}


def test_a_panel_prompt_streams_only_to_the_panel(kernel, server, panel):
    server.add(Turn.text("Answer for the panel."))
    # What the panel's pickers put on the line: a model and an agent.
    r = kernel.run("%%forge --panel -m openai/other-model -a plan\nAsked from the panel",
                   store_history=False)
    assert r.status == "ok", r.text
    # No widget, no text, no value: the panel is its view.
    assert (r.stdout, r.stderr, r.displays, r.results) == ("", "", [], [])
    got = kernel.received[panel]
    start, _batches, _end = one_turn(got)
    assert start["origin"] == "panel" and start["prompt"] == "Asked from the panel"
    assert list(texts(got).values()) == ["Answer for the panel."]
    # the prompt, then the notebook's context note (notebook/cells/note.py), which says where from
    [asked] = [q for q in server.requests
               if q.messages[-1]["content"].split("\n\n[Notebook context")[0] == "Asked from the panel"
               and "PLAN mode" in q.messages[0]["content"]]
    assert "This prompt came from the side panel." in asked.messages[-1]["content"]
    assert asked.model == "other-model"
    origin = kernel.run("import forge_jupyter as fj; s = fj.current()\n"
                        "print([m.origin for m in s.store.read_timeline("
                        "get_ipython()._forge_magics.controller.current_session_id)][-2])")
    assert "'surface': 'panel'" in origin.stdout and "'execution_count': None" in origin.stdout


def test_a_panel_prompt_that_cannot_run_says_why_in_its_own_output(kernel, server, panel):
    r = kernel.run("%%forge --panel -a nosuch\nHello", store_history=False)
    # One line saying what to do (IPython prints a UsageError as such), not a traceback.
    assert r.status == "error" and "UsageError: no agent named 'nosuch'" in r.stderr, r
    assert "Traceback" not in r.stderr
    # refused before it ran: not a turn, so the panel lists none ("Done" before)
    assert not of(kernel.received[panel], "turn") and not of(kernel.received[panel], "turn-end")
    assert kernel.run("1 + 1").results[0]["text/plain"] == "2"


@pytest.mark.parametrize("cell", ["%%forge --budget 0\nHello", "%%forge -s nosuch\nHello",
                                  "%%forge --max-tokens 0\nHello"])
def test_a_cell_refused_for_its_options_is_not_listed_as_a_turn(kernel, server, panel, cell):
    before = len(server.requests)
    r = kernel.run(cell)
    assert r.status == "error" and r.stderr.startswith("UsageError: "), r
    got = kernel.received[panel][1:]
    assert not of(got, "turn") and not of(got, "batch") and not of(got, "turn-end"), got
    assert len(server.requests) == before
    server.add(Turn.text("Hello back."))  # the next cell is a turn as before
    assert kernel.run("%%forge\nHello").status == "ok"
    start, _batches, _end = one_turn(kernel.received[panel][1:])
    assert start["prompt"] == "Hello"


def test_the_kernel_sends_model_and_prompt_text_as_data_never_html(kernel, server, panel):
    server.add(Turn.text(" ".join(XSS)))
    kernel.run("%%forge --panel\nEcho " + " ".join(XSS), store_history=False)
    got = kernel.received[panel]
    [start] = of(got, "turn")
    assert start["prompt"] == "Echo " + " ".join(XSS)
    assert list(texts(got).values()) == [" ".join(XSS)]  # verbatim: escaping is the panel's job

    def keys(value: Any) -> list[str]:
        if isinstance(value, dict):
            return [*value, *(k for v in value.values() for k in keys(v))]
        return [k for v in value for k in keys(v)] if isinstance(value, list) else []

    assert not [k for k in keys(got) if "html" in k.lower()]
    assert "&lt;" not in json.dumps(got)


@pytest.mark.parametrize("bad", [
    "hello", None, 42, ["hello"], {}, {"type": None}, {"type": "HELLO"}, {"type": " hello"},
    {"type": ["approve"]}, {"type": "approve"}, {"type": "approve", "request_id": 7, "answer": "once"},
    {"type": "approve", "request_id": "apr_x", "answer": "ONCE"},
    {"type": "approve", "request_id": "apr_x", "answer": {"$ne": None}},
    {"type": "approve", "request_id": "../../apr_x", "answer": "once"},
    {"type": "approve", "request_id": "a" * 10_000, "answer": "once"},
    {"type": "approve", "request_id": "apr_x", "answer": "deny", "reason": "x" * 1_000_000},
    {"type": "approve", "request_id": "apr_x", "answer": "deny", "reason": ["no"]},
    {"type": "approve", "request_id": "apr_nope", "answer": "once"},
    {"type": "answer"}, {"type": "answer", "request_id": "qst_x"},
    {"type": "answer", "request_id": "qst_x", "text": ["2024"]},
    {"type": "answer", "request_id": "qst_x", "text": "   "},
    {"type": "answer", "request_id": "qst_x", "text": "x" * 1_000_000},
    {"type": "answer", "request_id": "../qst_x", "text": "2024"},
    {"type": "answer", "request_id": "qst_nope", "text": "2024"},
    {"type": "stop"}, {"type": "stop", "session_id": {"$gt": ""}}, {"type": "stop", "session_id": "ses_nope"},
    {"type": "__proto__"}, {"type": "eval", "code": "import os"},
])
def test_a_malformed_panel_message_gets_a_notice_and_the_kernel_stays_healthy(kernel, panel, bad):
    [notice] = kernel.send(panel, bad)
    assert notice["kind"] == "notice" and notice["level"] == "warning"
    assert len(notice["message"]) < 400  # never the huge input echoed back
    assert kernel.run("1 + 1").results[0]["text/plain"] == "2"
    log = kernel.log_path.read_text()
    assert "Traceback" not in log and "Exception in comm" not in log, log[-2000:]


def test_a_panel_prompt_with_no_panel_attached_completes_as_text(kernel, server):
    server.add(Turn([tool_call("write_note", {"text": "nobody"})]), Turn.text("Could not write it."))
    kernel.run("%config Forge.widget = 'auto'\nimport os\nos.environ['FORGE_WIDGET'] = 'auto'")
    r = kernel.run("%%forge --panel\nNote nobody.", store_history=False, timeout=60)
    assert r.status == "ok" and "Could not write it." in r.stdout
    assert r.displays == []  # no widget for the panel's page to ignore: text at once
    assert "no one can answer approvals here" in r.stdout  # denied, not hung
    assert "Permission denied" in json.dumps([q.messages for q in server.requests])


def test_unloading_closes_the_panel_comms_and_loading_opens_a_new_one(kernel, panel):
    kernel.run("%unload_ext forge_jupyter")
    assert panel in kernel.closed  # the panel learns forge is gone from this kernel
    kernel.opened.clear()
    assert kernel.run("%load_ext forge_jupyter").status == "ok"
    [opened] = kernel.opened
    [info] = kernel.send(opened["comm_id"], {"type": "hello"})
    assert info["kind"] == "info" and info["live"] == []


# -- notebook_read's live document (issue 27): the page answers read-cells ---------------------


def _notebook_read_result(server) -> str:
    """This turn's call's result (the session's earlier turns come before it)."""
    return [m["content"] for m in server.requests[-1].messages if m["role"] == "tool"][-1]


def test_notebook_read_reads_the_pages_cells_with_an_unsaved_edit(kernel, server, panel):
    server.add(Turn([tool_call("notebook_read", {"search": "unsaved"})]), Turn.text("Seen."))
    asked: list[dict[str, Any]] = []
    page = [{"cell_type": "code", "id": "c-edit", "source": "x = 'an unsaved edit'",
             "metadata": {}, "execution_count": None, "outputs": []},
            {"cell_type": "markdown", "id": "c-md", "source": ["# Notes, ", "unsaved too"],
             "metadata": {}}]

    def answer(comm_id: str, data: dict[str, Any]) -> None:
        if data["kind"] == "read-cells" and comm_id == panel:
            asked.append(data)
            kernel.send(panel, {"type": "cells", "request_id": data["request_id"],
                                "cells": page}, wait=False)

    r = kernel.run("%%forge\nWhat did I change?", on_comm=answer)
    assert r.status == "ok", r.text
    assert [a["max_chars"] for a in asked] == [100_000]
    result = _notebook_read_result(server)
    assert "Read from the live notebook in JupyterLab (unsaved edits included)" in result
    assert "2 cell(s) mention 'unsaved'" in result and "x = 'an unsaved edit'" in result
    assert "id c-edit" in result and "# Notes, unsaved too" in result


def test_notebook_read_falls_back_to_the_history_when_the_page_does_not_answer(kernel, server, panel):
    server.add(Turn([tool_call("notebook_read", {})]), Turn.text("Seen."))
    r = kernel.run("%%forge\nList the cells.")  # the page never answers read-cells
    assert r.status == "ok", r.text
    result = _notebook_read_result(server)
    assert "the page did not send its cells within 3 s" in result
    assert "Read from this kernel's history only" in result  # no saved file in this kernel


def _noise_png(side: int = 300) -> bytes:
    """A PNG that does not compress: its base64 is longer than the page's 100,000 characters."""
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.frombytes("RGB", (side, side), os.urandom(side * side * 3)).save(buf, "PNG")
    return buf.getvalue()


def _image_parts(request) -> list[str]:
    """The image parts (data URLs) the request's messages after the last assistant one carry."""
    tail = request.messages[max(i for i, m in enumerate(request.messages) if m["role"] == "assistant"):]
    return [c["image_url"]["url"] for m in tail if isinstance(m.get("content"), list)
            for c in m["content"] if c.get("type") == "image_url"]


def test_notebook_read_sends_a_pages_chart_whole_to_a_vision_model(kernel, server, panel):
    import base64

    png = base64.b64encode(_noise_png()).decode()
    assert len(png) > 100_000
    server.add(Turn([tool_call("notebook_read", {"index": 0})]), Turn.text("A noisy square."))
    asked: list[dict[str, Any]] = []

    def cell(data: str) -> dict[str, Any]:
        return {"cell_type": "code", "id": "c-chart", "source": "show(noise)", "metadata": {},
                "execution_count": 3, "outputs": [
                    {"output_type": "display_data", "metadata": {},
                     "data": {"image/png": data, "text/plain": "<Figure size 300x300>"}}]}

    def answer(comm_id: str, data: dict[str, Any]) -> None:
        if data["kind"] == "read-cells" and comm_id == panel:
            asked.append(data)
            # as the page does (liveCells.ts): data cut to max_chars, images whole when asked
            whole = "c-chart" in data.get("image_ids", [])
            value = png[:data["image_chars"]] if whole else png[:data["max_chars"]]
            kernel.send(panel, {"type": "cells", "request_id": data["request_id"],
                                "cells": [cell(value)]}, wait=False)

    r = kernel.run("%%forge\nWhat does the chart show?", on_comm=answer)
    assert r.status == "ok", r.text
    assert [a.get("image_ids") for a in asked] == [None, ["c-chart"]]  # the second: for its image
    result = _notebook_read_result(server)
    assert "[image/png" in result and "from cell #0" in result
    assert "go with this result, in order, to a model that takes images" in result
    [url] = _image_parts(server.requests[-1])  # gpt-4o-mini takes images
    sent = base64.b64decode(url.split(",", 1)[1])
    import io

    from PIL import Image

    assert Image.open(io.BytesIO(sent)).size[0] > 0  # a whole image, decoded and re-encoded
