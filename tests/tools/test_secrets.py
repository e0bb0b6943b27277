"""Secrets never reach the store, the disk, the screen or the model (issue 10, item 4).

Through the real prompt path: the fake model server over HTTP, real litellm, a real DuckDB
file, the real ``python`` tool printing the test's own environment. Then every place a secret
could land is read back — raw SQL over the file, the JSON export, Parquet exports, the saved
full output of a truncated result, every request the model server received, and every event
the screen was sent.
"""

from __future__ import annotations

import json
import os
from urllib.parse import quote

import duckdb
import pyarrow.parquet as pq
import pytest

import forge_jupyter.scrub.scrubber as scrubber
from forge_jupyter.bus import MessageUpdated, PartDelta, PartUpdated, SessionStatus, ToolOutput
from forge_jupyter.scrub import env_secret
from forge_jupyter.testing import Turn, http_error, reasoning, text, tool_call

GITHUB = "ghp_R4nd0mT0k3nV4lu3F0rT3st1ngAbCdEf012345"
DB_PASSWORD = "hunter2pass"
DB_URL = f"postgresql://u:{DB_PASSWORD}@h/db"
PASSWORD = 'Pa$$w0rd"with\\quote'  # escaped differently in JSON, in a repr, in a URL
LOWER = "lowercase-token-value-123"  # under a lower-case name
OPENAI = "sk-proj-A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"
JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ"
       ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c")
AWS = "AKIAIOSFODNN7EXAMPLE"
TYPED = "sk-ant-api03-TypedIntoThePromptByTheUser0123456789"
TYPED_PASSWORD = "correcthorsebattery"

SECRETS = [GITHUB, DB_PASSWORD, PASSWORD, json.dumps(PASSWORD)[1:-1], repr(PASSWORD)[1:-1],
           quote(PASSWORD, safe=""), LOWER, OPENAI, JWT, AWS, TYPED, TYPED_PASSWORD]

PRINTS_EVERYTHING = """\
import json, os, urllib.parse
print(dict(os.environ))
print(json.dumps(dict(os.environ)))
print(urllib.parse.quote(os.environ["MY_SERVICE_PASSWORD"], safe=""))
print("password only:", urllib.parse.urlsplit(os.environ["DATABASE_URL"]).password)
for i in range(3000):
    print(f"filler line {i:05d} " + "." * 20)
print(os.environ["NOTES"])
"""
RAISES = """\
import os
raise ConnectionError("could not connect to " + os.environ["DATABASE_URL"]
                      + " as " + os.environ["GITHUB_TOKEN"])
"""


def _leaks(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


@pytest.fixture
def secret_env(monkeypatch):
    # Only these secrets: one the machine has (a CI token with spaces in its value) would make
    # the stream hold back as many characters as it is long, and the tests count what waits.
    for name, value in list(os.environ.items()):
        if env_secret(name, value):
            monkeypatch.delenv(name)
    # …nor one an earlier test remembered (an MCP server's "Bearer …" header has a space).
    monkeypatch.setattr(scrubber, "_remembered", {})
    monkeypatch.setenv("GITHUB_TOKEN", GITHUB)
    monkeypatch.setenv("DATABASE_URL", DB_URL)
    monkeypatch.setenv("MY_SERVICE_PASSWORD", PASSWORD)
    monkeypatch.setenv("my_api_token", LOWER)
    monkeypatch.setenv("NOTES", f"keys: {OPENAI} {JWT} {AWS}")  # known by their shape only


def test_secrets_reach_no_store_export_file_screen_or_model(make_forge, server, tmp_path,
                                                             secret_env):
    server.add(
        Turn([tool_call("python", {"code": PRINTS_EVERYTHING}),
              tool_call("python", {"code": RAISES})]),
        Turn([reasoning(f"The output showed {OPENAI} and {GITHUB}.", chunk=3),
              text(f"Found the token {GITHUB}, the database {DB_URL} and the password "
                   f"{PASSWORD}; also {JWT}.", chunk=3)]),
        Turn.text("Noted."),
    )
    forge = make_forge(db="duckdb", builtin_tools=True, permissions=["python:*=allow"],
                       output_root=tmp_path / "outputs")
    shown: list[str] = []

    def watch(e) -> None:
        if isinstance(e, PartDelta):
            shown.append(e.delta)
        elif isinstance(e, ToolOutput):
            shown.append(e.text)
        elif isinstance(e, PartUpdated):
            shown.append(json.dumps(e.part.to_json()))
        elif isinstance(e, MessageUpdated):
            shown.append(json.dumps(e.message.to_json()))

    forge.bus.subscribe(watch)
    session = forge.session("leaky")
    answer = session.prompt("show me the environment")
    typed = session.prompt(f"use my key {TYPED} and password={TYPED_PASSWORD} from now on")

    # What the person sees: the answer, and everything the widget was sent.
    assert _leaks(answer.text) == [] and _leaks(typed.text) == []
    assert _leaks("".join(shown)) == []
    assert "[secret:GITHUB_TOKEN]" in answer.text
    assert "postgresql://u:[secret:DATABASE_URL]@h/db" in answer.text  # host kept

    printed, raised = session.messages()[1].tool_parts
    assert printed.state == "completed" and raised.state == "error"
    assert "[secret:GITHUB_TOKEN]" in printed.output and "[secret:my_api_token]" in printed.output
    assert "password only: [secret:DATABASE_URL]" in printed.output
    assert "could not connect to postgresql://u:[secret:DATABASE_URL]@h/db" in raised.error
    assert "ConnectionError" in raised.error  # the traceback itself is kept

    # The full output saved for the truncated result: scrubbed on its way to disk.
    saved = printed.metadata["truncated"]["saved"]
    on_disk = open(saved, encoding="utf-8").read()
    assert _leaks(on_disk) == []
    assert "filler line 02999" in on_disk  # it is the whole output
    assert "keys: [secret:openai-key] [secret:jwt] [secret:aws-access-key]" in on_disk

    # What the model received: tool results, its own echoed text, the user's typed key.
    assert len(server.requests) == 3
    for request in server.requests:
        assert _leaks(json.dumps(request.body)) == [], request.index
    assert "use my key [secret:anthropic-key] and password=[secret:password]" in \
        json.dumps(server.requests[2].messages)

    # Exports: JSON, and every view as Parquet.
    exported = forge.export_session(session, tmp_path / "leaky.json").read_text()
    assert _leaks(exported) == [] and "[secret:GITHUB_TOKEN]" in exported
    for view in ("parts", "tool_calls", "messages", "turns", "events"):
        table = pq.read_table(forge.export_parquet(view, tmp_path / f"{view}.parquet"))
        assert _leaks(json.dumps(table.to_pylist(), default=str)) == [], view

    # The store itself, read with raw SQL over every table of the file.
    forge.close()
    con = duckdb.connect(str(tmp_path / "forge.duckdb"), read_only=True)
    try:
        tables = [r[0] for r in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE'"
        ).fetchall()]
        assert {"part", "message", "event"} <= set(tables)
        for table in tables:
            rows = con.execute(f'SELECT * FROM "{table}"').fetchall()
            assert _leaks(json.dumps(rows, default=str)) == [], table
    finally:
        con.close()


def test_a_secret_split_across_streamed_deltas_never_shows_whole(make_forge, server, secret_env):
    # one character a delta: every secret arrives in pieces
    server.add(Turn([text(f"token {GITHUB} and url {DB_URL} and jwt {JWT} done", chunk=1)]))
    forge = make_forge()
    live: list[str] = []
    forge.bus.subscribe(lambda e: live.append(e.delta), types=PartDelta)
    answer = forge.session("s").prompt("go")
    so_far = ""
    for delta in live:  # at no moment does the screen hold a secret
        so_far += delta
        assert _leaks(so_far) == [], so_far
    assert answer.text == ("token [secret:GITHUB_TOKEN] and url postgresql://u:[secret:DATABASE_URL]"
                           "@h/db and jwt [secret:jwt] done")
    # the last word waits for what follows it; the part's full row brings it (and replaces
    # what the deltas built on the screen)
    assert answer.text == so_far + "done"


def test_a_secret_in_a_custom_tools_error_and_in_a_providers_error(make_forge, server,
                                                                   secret_env):
    def connect(host: str) -> str:
        """Connect.

        host: where
        """
        raise ValueError(f"auth failed for {host} with token {GITHUB}")

    server.add(Turn([tool_call("connect", {"host": "db.internal"})]),
               *[Turn([http_error(500, f"upstream rejected Authorization: Bearer {OPENAI}")])] * 4)
    forge = make_forge(tools=[connect])
    statuses: list[str] = []
    forge.bus.subscribe(lambda e: statuses.append(json.dumps(e.detail)), types=SessionStatus)
    answer = forge.session("s").prompt("connect")
    call = forge.session("s").messages()[1].tool_parts[0]
    assert call.state == "error" and "[secret:GITHUB_TOKEN]" in call.error
    assert _leaks(call.error) == []
    assert answer.status == "error" and _leaks(answer.error.message) == []
    retries = [p for p in answer.parts if p.type == "retry"]
    assert retries and all(_leaks(p.error) == [] for p in retries)
    assert _leaks("".join(statuses)) == []


def test_tool_arguments_are_stored_scrubbed_but_the_tool_runs_with_them(make_forge, server):
    got: list[str] = []

    def remember(value: str) -> str:
        """Keep a value.

        value: what to keep
        """
        got.append(value)
        return "kept"

    server.add(Turn([tool_call("remember", {"value": f"api_key={OPENAI}"})]), Turn.text("ok"))
    forge = make_forge(tools=[remember])
    forge.session("s").prompt("keep it")
    assert got == [f"api_key={OPENAI}"]  # the call did what the model asked
    call = forge.session("s").messages()[1].tool_parts[0]
    assert call.input == {"value": "api_key=[secret:openai-key]"}
    assert OPENAI not in json.dumps(server.requests[1].messages)
