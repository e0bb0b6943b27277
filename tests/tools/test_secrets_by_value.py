"""Secrets by value, not by name (issue 24, class 5): every environment value that looks like
a secret is one, under whatever name; key shapes and the encodings of known values are hidden
too; harmless values (paths, locale, short numbers) stay readable.

Through the real prompt path: the fake model server over HTTP and real litellm, a real DuckDB
file, the real ``python`` tool printing what the test process's environment holds."""

from __future__ import annotations

import base64
import json
import random

import duckdb
import pytest

from forge_jupyter.scrub import Scrubber
from forge_jupyter.testing import Turn, tool_call

# Under names no list of secret names has, or names it missed (the measured leaks).
ENV = {
    "MYSQL_PWD": "xK9!mQ2vZr",
    "SECRET_KEY_BASE": "9f8e7d6c5b4a39281706f5e4d3c2b1a0deadbeef",
    "AZURE_STORAGE": ("DefaultEndpointsProtocol=https;AccountName=acct;AccountKey="
                      "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA+/ab==;EndpointSuffix=core.windows.net"),
    "ALERTS_HOOK": "https://hooks.slack.com/services/T0AB12CD3/B0EF45GH6/XxYyZz0123456789AbCdEfGh",
    "GL_CI": "glpat-Ab12Cd34Ef56Gh78Ij90",
    "SERVICE_CODE": "Zq8wLp3Rt7Yv",
    "ORDERS_BACKEND": "Tr0ub4dor&3-horse",
}
# Readable values that must stay readable (under names the harmless list does not name, too).
HARMLESS = {"LANG": "en_US.UTF-8", "DEPLOY_STAGE": "production", "WORKERS": "12345678",
            "BRANCH_REF": "refs/heads/main", "TOOLS_AT": "/opt/tools/bin:/usr/local/bin",
            "RELEASE_DAY": "2024-01-01"}


def _encodings(value: str) -> list[str]:
    """How code prints a value without printing it: base64 inside a longer text (each
    alignment), base64url, hex in either case."""
    raw = value.encode()
    return [base64.b64encode(raw).decode(), base64.b64encode(b"u:" + raw + b"!").decode(),
            base64.b64encode(b"x" + raw).decode(), base64.urlsafe_b64encode(b"??" + raw).decode(),
            raw.hex(), raw.hex().upper()]


def _spelled(value: str) -> list[str]:
    return [value, *_encodings(value)]


def _cores(value: str) -> list[str]:
    """What must never be seen: the value, and each encoding's middle (its ends may carry the
    bits of what surrounds the value)."""
    return [value, *(e[3:-3] for e in _encodings(value))]


PRINTS = """\
import base64, os
for name in {names!r}:
    v = os.environ[name].encode()
    print(name, v.decode())
    print(base64.b64encode(v).decode(), base64.b64encode(b"u:" + v + b"!").decode())
    print(base64.b64encode(b"x" + v).decode(), base64.urlsafe_b64encode(b"??" + v).decode())
    print(v.hex(), v.hex().upper())
for name in {harmless!r}:
    print(name, os.environ[name])
print("PATH first:", os.environ["PATH"].split(os.pathsep)[0])
"""


@pytest.fixture
def value_env(monkeypatch):
    for k, v in {**ENV, **HARMLESS}.items():
        monkeypatch.setenv(k, v)


def _leaks(text: str) -> list[str]:
    return [c for v in ENV.values() for c in _cores(v) if c in text]


def test_a_secret_printed_by_python_reaches_no_model_store_or_export(make_forge, server,
                                                                      tmp_path, value_env):
    import os

    code = PRINTS.format(names=sorted(ENV), harmless=sorted(HARMLESS))
    server.add(Turn([tool_call("python", {"code": code})]), Turn.text("Noted."))
    forge = make_forge(db="duckdb", builtin_tools=True, permissions=["python=allow"],
                       output_root=tmp_path / "outputs")
    session = forge.session("by-value")
    session.prompt("show me")
    printed = session.messages()[1].tool_parts[0]
    assert printed.state == "completed"
    assert _leaks(printed.output) == []
    assert "MYSQL_PWD [secret:MYSQL_PWD]" in printed.output  # named: readable as what it was
    assert "SERVICE_CODE [secret:SERVICE_CODE]" in printed.output
    for name, value in HARMLESS.items():  # paths, locale, words, numbers: left alone
        assert f"{name} {value}" in printed.output
    assert "PATH first: " + os.environ["PATH"].split(os.pathsep)[0] in printed.output

    # what the fake server received next: the tool result in the model's next request
    assert len(server.requests) == 2
    assert _leaks(json.dumps(server.requests[1].body)) == []
    assert "[secret:SERVICE_CODE]" in json.dumps(server.requests[1].body)

    exported = forge.export_session(session, tmp_path / "s.json").read_text()
    assert _leaks(exported) == [] and "[secret:GL_CI]" in exported
    forge.close()
    con = duckdb.connect(str(tmp_path / "forge.duckdb"), read_only=True)
    try:
        for (table,) in con.execute("SELECT table_name FROM information_schema.tables "
                                    "WHERE table_type = 'BASE TABLE'").fetchall():
            rows = con.execute(f'SELECT * FROM "{table}"').fetchall()
            assert _leaks(json.dumps(rows, default=str)) == [], table
    finally:
        con.close()


# Shapes found in text whatever the environment holds: several spellings each.
SHAPED = [
    ("glpat-xY12zW34vU56tS78rQ90", "gitlab-token"),
    ("token=glpat-AAAAbbbbCCCCdddd1234", "gitlab-token", "AAAAbbbbCCCCdddd1234"),
    ("gldt-0123456789abcdefABCDEF", "gitlab-token"),
    ("https://hooks.slack.com/services/T000AAAA/B000BBBB/abcdefghijklmnopqrstuvwx", "slack-webhook"),
    ("curl -X POST hooks.slack.com/workflows/T01ABC/A02DEF/123/abcdefghijkl9876", "slack-webhook",
     "abcdefghijkl9876"),
    ("xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOp", "slack-token"),
    ("xoxp-2222-3333-4444-abcdefabcdef", "slack-token"),
    ("ghp_" + "A1b2C3d4E5" * 4, "github-token"),
    ("github_pat_11ABCDEFG0" + "x" * 40, "github-token"),
    ("AKIAIOSFODNN7EXAMPLE", "aws-access-key"),
    ("sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345", "anthropic-key"),
    ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abc123DEF456", "jwt"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
     "private-key", "MIIEowIBAAKCAQEA"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----",
     "private-key", "b3BlbnNzaC1rZXk"),
    ("mysql://admin:S3cr3t!pw@db.internal:3306/app", "url-password", "S3cr3t!pw"),
    ("amqp://guest:hunter2hunter@mq/", "url-password", "hunter2hunter"),
    ("AccountName=acct;AccountKey=Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA==;EndpointSuffix=x", "AccountKey",
     "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA"),
    ("SharedAccessSignature=sv=2021-06-08&ss=b&sig=AbCdEf0123456789%3D", "SharedAccessSignature",
     "AbCdEf0123456789"),
    ("Endpoint=sb://x.servicebus.windows.net/;SharedAccessKey=Qw3rTy+uIoP/aSdF=", "SharedAccessKey",
     "Qw3rTy+uIoP"),
    ("export MYSQL_PWD=0therS3cret", "MYSQL_PWD", "0therS3cret"),
    ("npm_" + "aB3dE6gH9j" * 3 + "K2mN5p", "npm-token"),
]


@pytest.mark.parametrize("shaped", SHAPED, ids=lambda s: s[1])
def test_key_shapes_are_hidden_in_any_text(shaped):
    text, label, *part = shaped
    scrubbed = Scrubber()(f"output: {text} end")
    assert f"[secret:{label}]" in scrubbed
    assert (part[0] if part else text) not in scrubbed


@pytest.mark.parametrize("value", ["Zq8wLp3Rt7Yv", "xK9!mQ2vZr", "9f8e7d6c5b4a3928deadbeef",
                                   "Ünïcødé-Sécrèt-42"])
def test_every_encoding_of_a_known_value_is_hidden(value):
    scrub = Scrubber({"SOME_VALUE": value})
    for spelled in _spelled(value):
        out = scrub(f"blob {spelled} tail")
        assert "[secret:SOME_VALUE]" in out, spelled
        for core in _cores(value):
            assert core not in out, (spelled, out)


def test_harmless_environment_values_are_left_readable(monkeypatch):
    import os

    for k, v in HARMLESS.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.setenv("JPY_SESSION_NAME", "/home/me/work/analysis.ipynb")
    monkeypatch.setenv("FORGE_MODEL", "openai/gpt-4o-mini")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    scrub = Scrubber.from_environment()
    text = (f"LANG={HARMLESS['LANG']} TERM=xterm-256color ran /usr/bin/python in /opt/tools/bin "
            f"on production, 12345678 rows, model openai/gpt-4o-mini in us-east-1, 2024-01-01, "
            f"/home/me/work/analysis.ipynb, {os.environ['PATH'].split(os.pathsep)[0]}")
    assert scrub(text) == text


def test_a_known_value_split_anywhere_across_deltas_never_shows(value_env):
    scrub = Scrubber.from_environment()
    value = ENV["SERVICE_CODE"]
    text = " ".join(f"see {s} here" for s in _spelled(value)) + " done."
    rng = random.Random(3)
    for _ in range(30):
        stream = scrub.stream()
        shown = ""
        i = 0
        while i < len(text):
            j = i + rng.randint(1, 9)
            shown += stream.feed(text[i:j])
            for core in _cores(value):
                assert core not in shown
            i = j
        shown += stream.flush()
        assert shown == scrub(text) and shown.count("[secret:SERVICE_CODE]") == len(_spelled(value))


def test_a_value_secret_streamed_one_character_a_delta_never_reaches_the_screen(make_forge,
                                                                              server, value_env):
    from forge_jupyter.bus import PartDelta
    from forge_jupyter.testing import text

    value = ENV["SERVICE_CODE"]
    hexed = value.encode().hex()
    server.add(Turn([text(f"code {value} hex {hexed} and {ENV['GL_CI']} ok", chunk=1)]))
    forge = make_forge()
    live: list[str] = []
    forge.bus.subscribe(lambda e: live.append(e.delta), types=PartDelta)
    answer = forge.session("s").prompt("go")
    so_far = ""
    for delta in live:
        so_far += delta
        assert _leaks(so_far) == [], so_far
    assert answer.text == ("code [secret:SERVICE_CODE] hex [secret:SERVICE_CODE] and "
                           "[secret:GL_CI] ok")
