"""MCP servers' tools through the real loop: the fake model calls them over litellm, a real
server (written with the same SDK) answers over stdio or streamable HTTP."""

from __future__ import annotations

from pathlib import Path

from forge_jupyter.bus import SessionStatus
from forge_jupyter.session.approval import Answer
from forge_jupyter.testing import Turn, tool_call
from tests.mcp.mcp_helpers import EVIL, alive, stdio, tool_parts


def test_tools_are_offered_as_server__tool_with_the_servers_schema_and_run(mcp_forge, server):
    server.add(Turn([tool_call("t__lookup", {"key": "a"}), tool_call("t__chart", {}),
                     tool_call("t__report", {}), tool_call("t__lookup", {"key": 5})]),
               Turn.text("done"))
    forge = mcp_forge(stdio("t"))
    s = forge.session("s")
    assert s.prompt("look a up").text == "done"
    offered = {t["function"]["name"]: t["function"] for t in server.requests[0].body["tools"]}
    assert {"t__lookup", "t__chart", "t__delete_row", "t__touch"} <= set(offered)
    assert offered["t__lookup"]["parameters"]["properties"]["key"]["type"] == "string"
    assert offered["t__lookup"]["description"].startswith("[MCP server t] Look a row up")
    lookup, chart, report, wrong = tool_parts(forge, s)
    assert (lookup.state, lookup.output) == ("completed", "alpha")
    # Arguments are checked against the server's schema before anything is sent to it.
    assert wrong.state == "error" and wrong.error.startswith("Invalid arguments for t__lookup: key:")
    # The image is a file in the session's output folder, named after the call, never the server.
    png = Path(chart.metadata["files"][0]["path"])
    assert png.parent == Path(forge.output_dir(s.id)) / "mcp" and png.name.startswith(chart.id)
    assert png.read_bytes().startswith(b"\x89PNG") and str(png) in chart.output
    assert chart.output.startswith("the chart\n[image image/png, 73 bytes")
    # The resource's text is inline; it is saved as a .csv whatever its URI says.
    csv = Path(report.metadata["files"][0]["path"])
    assert csv.suffix == ".csv" and csv.read_text() == "a,b\n1,2\n" and "a,b\n1,2" in report.output
    assert csv.parent == png.parent
    files = [p for m in forge.store.read_timeline(s.id) for p in m.parts if p.type == "file"]
    assert sorted(f.path for f in files) == sorted([str(png), str(csv)])
    # What the model got back is what the tool card holds.
    back = [m["content"] for m in server.requests[1].messages if m.get("role") == "tool"]
    assert back[0] == "alpha"


def test_annotations_decide_ask_under_build_and_deny_under_plan(mcp_forge, server):
    server.add(Turn([tool_call("t__delete_row", {"key": "a"}), tool_call("t__touch", {"key": "b"}),
                     tool_call("t__lookup", {"key": "a"})]), Turn.text("asked"),
               Turn.text("planned"))
    forge = mcp_forge(stdio("t"))
    asked = []
    forge.on_approval(lambda r: (asked.append(r.tool), Answer("deny", "not today", "bob"))[1])
    s = forge.session("s")
    s.prompt("delete a")
    delete, touch, lookup = tool_parts(forge, s)
    assert asked == ["t__delete_row", "t__touch"]  # destructive and unknown ask; read-only runs
    assert delete.state == touch.state == "error" and "not today" in delete.error
    assert (lookup.state, lookup.output) == ("completed", "alpha")  # the row was not deleted
    s.prompt("plan it", agent="plan")
    offered = server.requests[-1].tools
    assert "t__lookup" in offered and "t__delete_row" not in offered and "t__touch" not in offered


def test_rules_name_mcp_tools_like_any_tool(mcp_forge, server):
    server.add(Turn([tool_call("t__touch", {"key": "b"})]), Turn.text("ok"), Turn.text("none"))
    forge = mcp_forge(stdio("t"), permissions=["t__touch=allow"])
    s = forge.session("s")
    s.prompt("touch b")
    assert tool_parts(forge, s)[0].output == "touched b"
    s.prompt("again", permissions=["t__*=deny"])
    assert not [t for t in server.requests[-1].tools if t.startswith("t__")]


def test_a_path_pattern_on_an_mcp_tool_cannot_be_walked_out_of(mcp_forge, server):
    inside = ["data/a.txt", "./data/b.txt", "data//c.txt", "data/sub/../d.txt"]
    outside = ["data/../secret.txt", "data/../../etc/passwd", "./data/./../x", "secret/data/y"]
    server.add(Turn([tool_call("t__write_note", {"path": p, "text": "x"}) for p in inside + outside]),
               Turn.text("ok"))
    forge = mcp_forge(stdio("t"), permissions=["t__write_note:data/*=allow"])
    asked = []
    forge.on_approval(lambda r: (asked.append(r.subject), Answer("deny", "no", "bob"))[1])
    s = forge.session("s")
    s.prompt("notes")
    parts = tool_parts(forge, s)
    assert [p.state for p in parts] == ["completed"] * 4 + ["error"] * 4
    assert asked == ["secret.txt", "../etc/passwd", "x", "secret/data/y"]


def test_a_crash_mid_call_is_a_tool_error_and_the_server_restarts_once(mcp_forge, server):
    server.add(Turn([tool_call("t__crash", {})]), Turn([tool_call("t__whoami", {})]),
               Turn([tool_call("t__crash", {})]), Turn([tool_call("t__whoami", {})]),
               Turn.text("gave up"))
    forge = mcp_forge(stdio("t"))
    s = forge.session("s")
    s.prompt("crash it")
    first_pid = None
    crash1, who, crash2, dead = tool_parts(forge, s)
    assert crash1.state == "error" and "crashed during the call" in crash1.error
    assert "exited with code 3" in crash1.error
    assert who.state == "completed" and who.output.startswith("pid=")
    first_pid = int(who.output.split()[0].removeprefix("pid="))
    assert crash2.state == "error" and "crashed during the call" in crash2.error
    assert dead.state == "error" and "failed twice" in dead.error
    assert "%forge mcp restart t" in dead.error
    row = forge.mcp.status()[0]
    assert (row["state"], row["starts"]) == ("failed", 2)
    assert not alive(first_pid)
    # The person restarts it by hand: a third process, the budget renewed.
    forge.mcp.restart("t")
    assert forge.mcp.status()[0]["state"] == "running"


def test_a_call_that_never_answers_times_out_and_the_server_keeps_serving(mcp_forge, server):
    server.add(Turn([tool_call("t__hang", {})]), Turn([tool_call("t__lookup", {"key": "b"})]),
               Turn.text("ok"))
    forge = mcp_forge(stdio("t", timeout=1.5))
    s = forge.session("s")
    s.prompt("hang")
    hang, lookup = tool_parts(forge, s)
    assert hang.state == "error" and "did not finish within 1.5 s" in hang.error
    assert (lookup.state, lookup.output) == ("completed", "beta")
    assert forge.mcp.status()[0]["starts"] == 1


def test_a_server_that_never_answers_its_handshake_is_stopped_and_said(mcp_forge, server):
    import sys

    server.add(Turn.text("no tools"), Turn.text("still none"))
    mute = {"mute": {"command": sys.executable, "args": ["-c", "import time; time.sleep(600)"],
                     "startup_timeout": 1}}
    forge = mcp_forge(mute)
    notices = []
    forge.bus.subscribe(lambda e: notices.append(e.detail.get("message", "")), types=SessionStatus)
    s = forge.session("s")
    s.prompt("hello")
    assert server.requests[0].tools == []
    said = [n for n in notices if "mute" in n]
    assert said and "did not answer within 1 s" in said[0]
    conn = forge.mcp.supervisor.connections["mute"]
    assert not alive(conn.proc.pid)  # the silent process was stopped, not left behind
    s.prompt("again")  # tried once more, then given up
    assert forge.mcp.status()[0]["state"] == "failed" and conn.starts == 2


def test_a_100_mb_output_is_truncated_and_saved(mcp_forge, server):
    server.add(Turn([tool_call("t__huge", {"megabytes": 100})]), Turn.text("big"))
    forge = mcp_forge(stdio("t"))
    s = forge.session("s")
    s.prompt("huge")
    (part,) = tool_parts(forge, s)
    assert part.state == "completed" and len(part.output.encode()) < 60 * 1024
    assert "output truncated" in part.output
    cut = part.metadata["truncated"]
    assert cut["total_bytes"] == 100 * 1024 * 1024 // 100 * 100
    assert Path(cut["saved"]).stat().st_size == cut["total_bytes"]
    sent = [m["content"] for m in server.requests[1].messages if m.get("role") == "tool"][0]
    assert len(sent) < 60 * 1024


def test_secrets_stay_hidden_and_the_kernels_keys_stay_home(mcp_forge, server, monkeypatch):
    monkeypatch.setenv("FAKEPROVIDER_API_KEY", "sk-kernelkey-0123456789abcdef0123")
    monkeypatch.setenv("SERVICE_SECRET_VALUE", "svc-9f8e7d6c5b4a")
    server.add(Turn([tool_call("t__whoami", {"var": "SERVICE_TOKEN"}),
                     tool_call("t__whoami", {"var": "FAKEPROVIDER_API_KEY"}),
                     tool_call("t__env_report", {"var": "SERVICE_TOKEN"})]), Turn.text("ok"))
    forge = mcp_forge(stdio("t", env={"SERVICE_TOKEN": "${SERVICE_SECRET_VALUE}"}))
    s = forge.session("s")
    s.prompt("who")
    mine, kernel, report = tool_parts(forge, s)
    assert "svc-9f8e7d6c5b4a" not in mine.output and "SERVICE_TOKEN=[secret:" in mine.output
    assert kernel.output.endswith("FAKEPROVIDER_API_KEY=")  # not passed to the server at all
    saved = Path(report.metadata["files"][0]["path"]).read_text()  # the file on disk too
    assert "svc-9f8e7d6c5b4a" not in saved and saved.startswith("SERVICE_TOKEN=[secret:")
    wire = str(server.requests[1].body)
    assert "svc-9f8e7d6c5b4a" not in wire and "sk-kernelkey" not in wire
    assert "svc-9f8e7d6c5b4a" not in str(forge.mcp.status())


def test_another_tenant_sees_none_of_the_calls(mcp_forge, server, tmp_path):
    from forge_jupyter.errors import NotFound

    server.add(Turn([tool_call("t__lookup", {"key": "a"})]), Turn.text("ok"))
    a = mcp_forge(stdio("t"), db="duckdb", tenant="a")
    s = a.session("s")
    s.prompt("look")
    (part,) = tool_parts(a, s)
    a.close()
    b = mcp_forge({}, db="duckdb", tenant="b")
    assert b.tool_calls().empty
    try:
        b.store.get_part(part.id)
        raise AssertionError("tenant b read tenant a's part")
    except NotFound:
        pass


def test_untrusted_names_schemas_and_content_from_a_server(mcp_forge, server):
    import sys

    server.add(Turn([tool_call("evil__blobs", {"q": "x"})]), Turn.text("ok"))
    forge = mcp_forge({"evil one!": {"command": sys.executable, "args": [EVIL]}})
    notices = []
    forge.bus.subscribe(lambda e: notices.append(e.detail.get("message", "")), types=SessionStatus)
    s = forge.session("s")
    s.prompt("go")
    offered = {t["function"]["name"]: t["function"] for t in server.requests[0].body["tools"]}
    names = sorted(offered)
    # "ok tool/../x" and "ok_tool_x" reduce to one name: the first listed keeps it.
    assert names == ["evil_one__blobs", "evil_one__" + "n" * 54, "evil_one__ok_tool_x"]
    assert all(__import__("re").fullmatch(r"[A-Za-z0-9_-]{1,64}", n) for n in names)
    assert len(offered["evil_one__ok_tool_x"]["description"]) <= 2100
    said = " ".join(notices)
    for why in ("not a JSON Schema object", "not valid JSON Schema", "refers outside itself",
                "bytes (the limit", "is taken by another tool"):
        assert why in said, why
    server.add(Turn([tool_call("evil_one__blobs", {"q": "x"})]), Turn.text("ok"))
    s.prompt("blobs")
    part = tool_parts(forge, s)[-1]
    assert part.state == "completed"
    assert "not valid base64" in part.output
    saved = [Path(f["path"]) for f in part.metadata["files"]]
    assert all(p.parent == Path(forge.output_dir(s.id)) / "mcp" for p in saved)
    assert all(p.suffix == ".bin" for p in saved)  # a MIME type that is not one: no extension
    assert "[resource link: https://example.invalid/x link]" in part.output


def test_streamable_http_server(mcp_forge, server, http_server):
    server.add(Turn([tool_call("web__lookup", {"key": "b"}), tool_call("web__chart", {})]),
               Turn.text("ok"))
    forge = mcp_forge({"web": {"url": http_server}})
    s = forge.session("s")
    s.prompt("over http")
    lookup, chart = tool_parts(forge, s)
    assert (lookup.state, lookup.output) == ("completed", "beta")
    assert Path(chart.metadata["files"][0]["path"]).read_bytes().startswith(b"\x89PNG")
    assert forge.mcp.status()[0]["transport"] == "http"


def test_close_stops_every_server(mcp_forge, server):
    server.add(Turn([tool_call("t__whoami", {}), tool_call("u__whoami", {})]), Turn.text("ok"))
    forge = mcp_forge({**stdio("t"), **stdio("u")})
    s = forge.session("s")
    s.prompt("who")
    pids = [int(p.output.split()[0].removeprefix("pid=")) for p in tool_parts(forge, s)]
    assert all(alive(p) for p in pids) and len(set(pids)) == 2
    forge.close()
    assert not any(alive(p) for p in pids)


def test_a_server_that_dies_at_start_is_said_with_its_stderr_scrubbed(mcp_forge, server,
                                                                       monkeypatch):
    import sys

    monkeypatch.setenv("DIES_SECRET_TOKEN", "dq-7Hx9Lm2Pq4Rs")
    server.add(Turn.text("no tools"))
    code = "import sys; print('bad config, token', sys.argv[1], file=sys.stderr); sys.exit(2)"
    forge = mcp_forge({"dies": {"command": sys.executable,
                                "args": ["-c", code, "${DIES_SECRET_TOKEN}"],
                                "env": {"DIES_SECRET_TOKEN": "${DIES_SECRET_TOKEN}"}}})
    notices = []
    forge.bus.subscribe(lambda e: notices.append(e.detail.get("message", "")), types=SessionStatus)
    forge.session("s").prompt("hello")
    said = [n for n in notices if "dies" in n]
    assert said and "could not start" in said[0] and "bad config, token" in said[0]
    assert "dq-7Hx9Lm2Pq4Rs" not in " ".join(notices) and "[secret:" in said[0]
