"""Commands (prompt templates run by name) and the person's shell commands (issue 18, items
4–5): through the fake model server and real litellm, a real DuckDB file."""

from __future__ import annotations

import json
import os
import random
import subprocess
import time

import pytest

from forge_jupyter.agents import PLAN_PROMPT
from forge_jupyter.errors import InvalidOption, NotFound
from forge_jupyter.message import ToolPart
from forge_jupyter.testing import Turn

SECRET = "sk-proj-A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"


@pytest.fixture
def setup(make_forge, tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / ".forge" / "commands").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    root = tmp_path / "nb"
    (root / ".forge" / "commands").mkdir(parents=True)

    def make(**kw):
        kw.setdefault("root", root)
        kw.setdefault("output_root", tmp_path / "out")
        return make_forge(db="duckdb", **kw)

    return make, root / ".forge" / "commands", home / ".forge" / "commands"


def user_text(request) -> str:
    return "\n".join(m.get("content") or "" for m in request.messages if m["role"] == "user")


def test_a_command_fills_its_arguments_and_honours_agent_and_model(setup, server):
    make, project, user = setup
    (project / "review.md").write_text(
        "---\ndescription: Review a function\nagent: plan\nmodel: openai/other-model\n"
        "allowed-tools: bash\n---\nReview $1 for bugs. Focus: $ARGUMENTS. ($2|$3|$9)\n")
    (user / "review.md").write_text("---\ndescription: the user's copy\n---\nold\n")
    (user / "hello.md").write_text("Say hello")
    server.add(Turn.text("ok"), Turn.text("ok"), Turn.text("ok"))
    forge = make()
    s = forge.session("s")
    answer = s.command("review", '"parse dates" edge $2 cases')
    request = server.requests[-1]
    assert request.model == "other-model"  # the front matter's model, through litellm
    assert PLAN_PROMPT[:60] in request.messages[0]["content"]  # and its agent
    assert answer.agent == "plan"
    # $1 is the first word (quotes group), $ARGUMENTS all of it, once: "$2" an argument
    # brings in is not substituted again; a missing one is empty
    assert user_text(request) == ('Review parse dates for bugs. Focus: "parse dates" edge $2 '
                                  'cases. (edge|$2|)')
    s.command("hello", "in French", model=forge.model, agent="build")  # options win
    request = server.requests[-1]
    assert request.model == "fake-model" and PLAN_PROMPT[:60] not in request.messages[0]["content"]
    assert user_text(request).endswith("Say hello\n\nin French")  # no placeholder: appended
    listed = forge.commands.scan()
    assert listed["review"].ignored == ("allowed-tools",) and listed["review"].source == "project"
    assert listed["hello"].source == "user"


@pytest.mark.parametrize("name", ["../review", "review/..", "..", "a/b", "", "re view", "x.md",
                                  "REVIEW\n", "/review", "review\x00"])
def test_hostile_command_names_are_refused_naming_the_known_ones(setup, server, name):
    make, project, _ = setup
    (project / "review.md").write_text("x")
    with pytest.raises(InvalidOption, match=r"not a command name.*Commands: /review\."):
        make().session("s").command(name)
    assert server.requests == []


def test_an_unknown_command_lists_the_known_ones(setup, server):
    make, project, user = setup
    (project / "review.md").write_text("x")
    (user / "plot.md").write_text("y")
    with pytest.raises(NotFound, match=r"no command named 'nope'\. Commands: /plot, /review\."):
        make().session("s").command("nope")


def test_hostile_command_files(setup, server, tmp_path):
    make, project, _ = setup
    (tmp_path / "secret.md").write_text("TOP-SECRET-TEMPLATE")
    os.symlink(tmp_path / "secret.md", project / "leak.md")  # a link out of the folder
    (project / "big.md").write_bytes(b"y" * (10 * 1024 * 1024))
    (project / "bad.md").write_bytes(b"---\ndescription: bad \xff bytes\n---\nsay \xfe\xff hi\n")
    os.mkfifo(project / "fifo.md")  # opening it would wait for a writer forever
    (project / "evil.md").write_text("---\nmodel: !!python/object/apply:os.system ['touch x']\n"
                                     "---\nx\n")  # front matter is never YAML code
    (project / "agent.md").write_text("---\nagent: ../build\n---\nx\n")
    forge = make()
    s = forge.session("s")
    for name, why in [("leak", "is a symbolic link"), ("big", "is over 256 KB"),
                      ("fifo", "not a regular file"), ("evil", "is not a model string"),
                      ("agent", "'../build' is not an agent name")]:
        with pytest.raises(InvalidOption, match=why):
            s.command(name)
    forge.commands.scan()
    assert len(forge.commands.problems) == 5
    server.add(Turn.text("ok"))
    s.command("bad")
    assert user_text(server.requests[-1]) == "say \ufffd\ufffd hi"
    assert forge.commands.scan()["bad"].description == "bad \ufffd bytes"
    assert "TOP-SECRET" not in json.dumps([r.body for r in server.requests])


def shell_parts(forge, s) -> list[ToolPart]:
    return [p for m in s.messages() if m.role == "user" for p in m.parts if isinstance(p, ToolPart)]


def test_shell_records_the_command_for_the_next_turn_scrubbed(setup, server, monkeypatch):
    make, _, _ = setup
    monkeypatch.setenv("MY_SERVICE_TOKEN", SECRET)
    forge = make()
    s = forge.session("s")
    r = s.shell('echo "hello from $(pwd)"; echo "token=$MY_SERVICE_TOKEN" >&2; exit 3')
    assert r.exit_code == 3 and not r.timed_out
    root = forge.root
    assert f"hello from {root}" in r.output and SECRET not in str(r)
    assert "[exit code 3]" in str(r)
    server.add(Turn.text("I see it"))
    s.prompt("what did my command print?")
    sent = user_text(server.requests[-1])
    assert "$ echo \"hello from $(pwd)\"" in sent and f"hello from {root}" in sent
    assert "[exit code 3]" in sent and "not a tool call of yours" in sent
    assert SECRET not in json.dumps(server.requests[-1].body)
    (part,) = shell_parts(forge, s)
    assert part.tool == "shell" and part.metadata["exit_code"] == 3
    assert part.metadata["by"] == "person" and part.input["command"].endswith("exit 3")
    rows = forge.sql("SELECT * FROM parts").to_csv()  # what the store holds
    assert SECRET not in rows and "[secret:" in rows


def test_shell_timeout_kills_the_process_group(setup, server, tmp_path):
    make, _, _ = setup
    forge = make(shell_timeout=1)
    marker = tmp_path / "survived"
    nap = f"sleep 3.{random.randrange(10**6)}"  # this run's own, for pgrep
    started = time.monotonic()
    r = forge.session("s").shell(f"echo started; ({nap}; touch {marker}) & sleep 30")
    assert time.monotonic() - started < 10
    assert r.timed_out and r.exit_code is None and "started" in r.output
    assert "did not finish within the timeout (Forge.shell_timeout)" in str(r)
    # The background child went with its group: no process of it is left (the subshell is a
    # fork of the command's bash, so its command line names the nap too), so none can make
    # the marker later. Waited for, not slept past: the kill may land a moment after return.
    deadline = time.monotonic() + 10
    while subprocess.run(["pgrep", "-f", nap], capture_output=True).returncode == 0:
        assert time.monotonic() < deadline, f"a process of the timed-out group ({nap}) lives on"
        time.sleep(0.05)
    assert not marker.exists()


def test_shell_output_is_truncated_and_saved(setup, server):
    make, _, _ = setup
    forge = make()
    s = forge.session("s")
    r = s.shell("seq 1 200000")
    assert r.exit_code == 0 and "output truncated" in r.output and len(r.output) < 60_000
    (part,) = shell_parts(forge, s)
    saved = part.metadata["truncated"]["saved"]
    assert open(saved).read().endswith("199999\n200000\n")
    server.add(Turn.text("ok"))
    s.prompt("and?")
    assert len(json.dumps(server.requests[-1].body)) < 80_000


def test_bad_shell_calls(setup, server):
    make, _, _ = setup
    s = make().session("s")
    with pytest.raises(ValueError, match="give a command"):
        s.shell("  ")
    with pytest.raises(InvalidOption, match="timeout must be a number greater than 0"):
        s.shell("true", timeout=0)
    assert s.messages() == []


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_a_session_that_starts_with_a_shell_command(setup, server, protocol):
    make, _, _ = setup
    forge = make(protocol=protocol)
    s = forge.session(None)
    s.shell("echo first")
    server.add(Turn.text("ok"))
    s.prompt("Summarise the output\nplease")
    sent = json.dumps(server.requests[-1].body["messages"])
    assert "$ echo first\\nfirst" in sent and "Summarise the output" in sent
    assert s.refresh().title == "Summarise the output"  # the person's first prompt titles it
