"""What the scrubber hides, in the spellings secrets take in real output — and what it leaves.

The scrubber is a pure function of text (and of the environment it was built from): these
tests call it directly. The whole path — store, exports, saved files, the model — is pinned in
test_secrets.py.
"""

from __future__ import annotations

import json
from urllib.parse import quote, quote_plus

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forge_jupyter.scrub import Scrubber, valid_text

GITHUB = "ghp_R4nd0mT0k3nV4lu3F0rT3st1ngAbCdEf012345"
PASSWORD = 'Pa$$ w0rd"with\\quote é'
SCRUB = Scrubber({"GITHUB_TOKEN": GITHUB, "MY_SERVICE_PASSWORD": PASSWORD,
                  "DATABASE_URL": "postgresql://u:hunter2pass@h/db"})

HIDDEN = [
    # known values, as printed, in JSON, in a repr, percent-encoded, in a traceback
    (f"token {GITHUB} end", "token [secret:GITHUB_TOKEN] end"),
    (json.dumps({"p": PASSWORD}), '{"p": "[secret:MY_SERVICE_PASSWORD]"}'),
    (json.dumps({"p": PASSWORD}, ensure_ascii=False), '{"p": "[secret:MY_SERVICE_PASSWORD]"}'),
    (repr({"p": PASSWORD}), "{'p': '[secret:MY_SERVICE_PASSWORD]'}"),
    (f"?p={quote(PASSWORD, safe='')}", "?p=[secret:MY_SERVICE_PASSWORD]"),
    (f"p={quote_plus(PASSWORD)}", "p=[secret:MY_SERVICE_PASSWORD]"),
    (f'  File "x.py", line 3\nKeyError: {GITHUB!r}', '  File "x.py", line 3\nKeyError: '
                                                     "'[secret:GITHUB_TOKEN]'"),
    # a URL's password: known or not, the rest of the URL stays readable
    ("postgresql://u:hunter2pass@h/db", "postgresql://u:[secret:DATABASE_URL]@h/db"),
    ("the password is hunter2pass", "the password is [secret:DATABASE_URL]"),
    ("https://user:p@ss@example.com:5432/db?x=1",
     "https://user:[secret:url-password]@example.com:5432/db?x=1"),
    ("redis://:s3cr3t@localhost:6379/0", "redis://:[secret:url-password]@localhost:6379/0"),
    ("MONGO=mongodb+srv://admin:Xy9@cluster0.example.net/test",
     "MONGO=mongodb+srv://admin:[secret:url-password]@cluster0.example.net/test"),
    # a secret's name and its value, any case, in the usual notations
    ('{"client_secret": "abcdef123456"}', '{"client_secret": "[secret:client_secret]"}'),
    ("{'AWS_SECRET_ACCESS_KEY': 'wJalrXUtnFEMI/K7MDENG'}",
     "{'AWS_SECRET_ACCESS_KEY': '[secret:AWS_SECRET_ACCESS_KEY]'}"),
    ("export STRIPE_SECRET=whsec_abcdefgh12345", "export STRIPE_SECRET=[secret:STRIPE_SECRET]"),
    ("SENTRY_DSN=https://abc123@o1.ingest.sentry.io/42", "SENTRY_DSN=[secret:SENTRY_DSN]"),
    ("GH_PAT=abcdefghij0123", "GH_PAT=[secret:GH_PAT]"),
    ("db_password: s3cr3t-value\n", "db_password: [secret:db_password]\n"),
    ("  api_key:   abcdefgh1234", "  api_key:   [secret:api_key]"),
    ('password = "hunter22"', 'password = "[secret:password]"'),
    ('"Api-Key" => "abcdefgh1234"', '"Api-Key" => "[secret:Api-Key]"'),
    ("use password=correcthorsebattery now", "use password=[secret:password] now"),
    ("GET /v1?api_key=abcdef123456&q=x", "GET /v1?api_key=[secret:api_key]&q=x"),
    ("s3/k?X-Amz-Signature=abcdef0123456789&x=1", "s3/k?X-Amz-Signature=[secret:X-Amz-Signature]&x=1"),
    ("maps?key=AIzaSyA-abcdefghijklmnopqrstuvwxyz12345", "maps?key=[secret:google-api-key]"),
    ("tiles?key=abcdefgh12345678&z=3", "tiles?key=[secret:key]&z=3"),
    ("Authorization: Bearer abcdefghijklmnop1234", "Authorization: Bearer [secret:bearer-token]"),
    # well-known shapes, whatever the name
    ("sk-proj-A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6", "[secret:openai-key]"),
    ("key sk-ant-api03-abcdefghijklmnopqrstuvwxyz-_01", "key [secret:anthropic-key]"),
    ("gho_abcdefghijklmnopqrstuvwxyz0123456789", "[secret:github-token]"),
    ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "[secret:github-token]"),
    ("xoxb-123456789012-abcdefghij", "[secret:slack-token]"),
    ("id AKIAIOSFODNN7EXAMPLE.", "id [secret:aws-access-key]."),
    ("hf_abcdefghijklmnopqrstuvwxyzABCDEF", "[secret:huggingface-token]"),
    ("rk_live_abcdefghijklmnop", "[secret:stripe-key]"),
    ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
     "[secret:jwt]"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\nafter",
     "[secret:private-key]\nafter"),
]

KEPT = [
    "max_tokens=4096 and input_tokens: 1200",
    "def login(password=args.password, token=None):",
    "password: Optional[str] = None",
    "bypass=abcdefghijk compass: northwest-ish",
    "the path to the pattern is a compatible dispatch",
    "risk-adjusted returns and a skeleton-key",
    "http://localhost:8080/path?page=2",
    'token = "tok"',  # too short to be a secret
    "df.groupby(key='region').agg(total=('sales', 'sum'))",
    "[secret:GITHUB_TOKEN] is what a scrubbed key looks like",
]


@pytest.mark.parametrize("text, hidden", HIDDEN)
def test_secrets_are_hidden_in_every_spelling(text, hidden):
    assert SCRUB(text) == hidden
    assert SCRUB(hidden) == hidden  # scrubbing twice changes nothing


@pytest.mark.parametrize("text", KEPT)
def test_ordinary_text_is_left_alone(text):
    assert SCRUB(text) == text


def test_environment_variables_are_found_by_name_in_any_case(monkeypatch):
    monkeypatch.setenv("my_api_token", "lowercase-token-value")
    monkeypatch.setenv("Service_Password", "MixedCase-pass-123")
    monkeypatch.setenv("SENTRY_DSN", "https://abc@o1.ingest.sentry.io/1")
    monkeypatch.setenv("GH_PAT", "abcdefghijkl")
    monkeypatch.setenv("REDIS_URL", "redis://:r3d1s-pass@cache:6379/0")  # any name, a password
    monkeypatch.setenv("PUBLIC_NOTE", "not a secret at all")  # a name that says nothing
    monkeypatch.setenv("SHORT_TOKEN", "abc")  # too short to hide without hiding words
    scrub = Scrubber.from_environment()
    assert scrub("a lowercase-token-value b") == "a [secret:my_api_token] b"
    assert scrub("MixedCase-pass-123") == "[secret:Service_Password]"
    assert scrub("dsn https://abc@o1.ingest.sentry.io/1") == "dsn [secret:SENTRY_DSN]"
    assert scrub("pat abcdefghijkl") == "pat [secret:GH_PAT]"
    assert scrub("not a secret at all, abc") == "not a secret at all, abc"
    assert scrub("password r3d1s-pass") == "password [secret:REDIS_URL]"
    assert scrub("redis://:r3d1s-pass@cache:6379/0") == "redis://:[secret:REDIS_URL]@cache:6379/0"


def test_a_key_configured_on_a_forge_is_hidden_everywhere_after(make_forge):
    make_forge(aws_secret_access_key="configured-secret-0123")  # an extra litellm kwarg
    scrub = Scrubber.from_environment()  # what exports and saved outputs use
    assert scrub("k configured-secret-0123") == "k [secret:aws_secret_access_key]"


def test_scrubbing_keeps_text_it_does_not_change_as_the_same_object():
    long = "an ordinary line of output\n" * 1000
    assert SCRUB(long) is long
    assert SCRUB("short") == "short"


def test_a_long_text_is_scrubbed_line_by_line_the_same_as_in_one_piece():
    lines = [f"row {i}: value {i * 7}" for i in range(2000)]
    lines[10] = f"GITHUB_TOKEN={GITHUB}"
    lines[1500] = "url postgresql://u:hunter2pass@h/db"
    text = "\n".join(lines)
    out = SCRUB(text)
    assert out.splitlines()[10] == "GITHUB_TOKEN=[secret:GITHUB_TOKEN]"
    assert out.splitlines()[1500] == "url postgresql://u:[secret:DATABASE_URL]@h/db"
    assert out == "\n".join(SCRUB(line) for line in lines)


SECRET_PIECES = [f"GITHUB_TOKEN={GITHUB}", '"password": "my secret phrase"', "Bearer abcdefghijklmnop1234",
                 "postgresql://u:hunter2pass@h/db", "sk-proj-A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6",
                 json.dumps(PASSWORD), "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----"]
PLAIN = ["the mean is 4.2", "and", "column `price`", "x: 1", "a=b", "done."]
VALUES = [GITHUB, "my secret phrase", "abcdefghijklmnop1234", "hunter2pass",
          "sk-proj-A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6", "MIIE", PASSWORD]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(SECRET_PIECES + PLAIN), min_size=1, max_size=12),
       st.lists(st.sampled_from([" ", "\n", ", "]), min_size=12, max_size=12),
       st.lists(st.integers(min_value=1, max_value=7), min_size=1, max_size=400),
       st.booleans())
def test_a_stream_never_shows_a_secret_and_ends_as_the_whole_text_scrubbed(pieces, seps, cuts, lines):
    text = "".join(p + s for p, s in zip(pieces, seps, strict=False))
    stream = SCRUB.stream(lines=lines)
    shown, i = "", 0
    for size in cuts:
        if i >= len(text):
            break
        shown += stream.feed(text[i:i + size])
        i += size
        assert not [v for v in VALUES if v in shown], shown
    shown += stream.feed(text[i:]) + stream.flush()
    assert shown == SCRUB(text)


def test_valid_text_replaces_lone_surrogates_and_rejoins_pairs():
    assert valid_text("a\ud800b") == "a\ufffdb"
    assert valid_text("\udcff.txt") == "\ufffd.txt"  # a non-UTF-8 byte in a file name
    assert valid_text("\ud83d\ude00") == "😀"
    plain, accented = "plain ascii", "déjà vu 😀"
    assert valid_text(plain) is plain and valid_text(accented) is accented
