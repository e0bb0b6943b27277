"""``%%forge /name args``, ``%forge commands`` and ``%forge shell`` in a real kernel, against
the fake model server through real litellm (issue 18, items 4–5)."""

from __future__ import annotations

import random
import subprocess
import time

import pytest

from forge_jupyter.testing import Turn, delay, text
from tests.notebook.nb_kernel import forge_kernel, person_text, usage_error


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    root = tmp_path_factory.mktemp("nb")
    commands = root / ".forge" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text(
        "---\ndescription: Review code for bugs\nmodel: openai/other-model\nsubtask: true\n---\n"
        "Review {literal} $1 — all: $ARGUMENTS\n")
    (root / "home" / ".forge" / "commands").mkdir(parents=True)
    (root / "home" / ".forge" / "commands" / "mine.md").write_text("My own: $ARGUMENTS")
    return root


@pytest.fixture(scope="module")
def kernel(model_server, root):
    k = forge_kernel(model_server.openai_base, root, {"HOME": str(root / "home")})
    yield k
    k.close()


def user_text(request) -> str:
    return "\n".join(person_text(m.get("content") or "") for m in request.messages
                     if m["role"] == "user")


def test_a_command_cell_fills_the_template_and_appends_the_cell(kernel, server):
    server.add(Turn.text("reviewed"))
    kernel.run("fn = 'parse_dates'\nnote = 'mind $2 and {x}'")
    r = kernel.run("%%forge /review {fn} carefully\nAlso: {note}.")
    assert r.status == "ok", r.text
    request = server.requests[-1]
    assert request.model == "other-model"  # the command's front matter
    # {fn} and {note} are the person's text, filled once; the template's braces stay literal
    assert user_text(request) == ("Review {literal} parse_dates — all: parse_dates carefully"
                                  "\n\nAlso: mind $2 and {x}.")
    server.add(Turn.text("mine"))
    r = kernel.run("%%forge -m openai/fake-model /mine now")
    assert r.status == "ok", r.text
    assert server.requests[-1].model == "fake-model"  # the cell's -m wins
    assert user_text(server.requests[-1]).endswith("My own: now")


def test_commands_are_listed_and_unknown_ones_refused(kernel, server):
    before = len(server.requests)
    r = kernel.run("%forge commands")
    assert r.status == "ok", r.text
    table = r.results[0]["text/plain"]
    assert "/review" in table and "Review code for bugs" in table and "openai/other-model" in table
    assert "/mine" in table
    assert "/review: front matter subtask ignored" in r.stdout
    for line in ["%%forge /nope x\nbody", "%%forge /../review\nbody", "%%forge /re.view"]:
        r = kernel.run(line)
        assert r.status == "error" and usage_error(r), r.text
        assert "Commands: /mine, /review." in r.stderr
    assert len(server.requests) == before  # nothing was sent


def test_shell_shows_its_result_and_the_next_turn_sees_it(kernel, server, root):
    r = kernel.run("%forge shell echo \"it's $((40+2))\" && ls .forge; exit 5")
    assert r.status == "ok", r.text
    shown = r.results[0]["text/plain"]
    assert "it's 42" in shown and "commands" in shown and "[exit code 5]" in shown
    r = kernel.run("%forge shell")
    assert usage_error(r) and "usage: %forge shell COMMAND" in r.stderr
    server.add(Turn.text("seen"))
    r = kernel.run("%%forge\nwhat did it print?")
    assert r.status == "ok", r.text
    sent = user_text(server.requests[-1])
    assert "$ echo \"it's $((40+2))\" && ls .forge; exit 5\nit's 42\ncommands" in sent
    assert "[exit code 5]" in sent and sent.endswith("what did it print?")


def test_shell_timeout_from_config(kernel):
    kernel.run("%config Forge.shell_timeout = 1")
    r = kernel.run("%forge shell echo begun; sleep 20")
    assert r.status == "ok", r.text
    assert "begun" in r.results[0]["text/plain"]
    assert "did not finish within the timeout (Forge.shell_timeout)" in r.results[0]["text/plain"]
    kernel.run("%config Forge.shell_timeout = 60")


def test_an_interrupted_shell_command_stops_its_processes(kernel, root):
    """Interrupting the cell stops the command's whole process group at once: before, the cell
    returned and the command ran on to its timeout, unseen, holding the session."""
    marker = root / "should-not-exist"
    nap = f"sleep 20.{random.randrange(10**6)}"  # this run's own, for pgrep
    msg_id = kernel.kc.execute(f"%forge shell ({nap}; touch {marker}) & sleep 30")
    deadline = time.monotonic() + 30  # the command has started: its nap is running
    while subprocess.run(["pgrep", "-f", nap], capture_output=True).returncode != 0:
        assert time.monotonic() < deadline, "the shell command never started"
        time.sleep(0.05)
    kernel.km.interrupt_kernel()
    reply = kernel.reply(msg_id, timeout=30)
    assert reply["content"]["status"] == "error"
    assert reply["content"]["ename"] == "KeyboardInterrupt"
    r = kernel.run(f"import subprocess\nprint(subprocess.run(['pgrep', '-f', {nap!r}], "
                   "capture_output=True, text=True).stdout or 'none')")
    assert r.stdout.strip() == "none", r.text
    r = kernel.run("%forge shell echo after")  # the session is free again
    assert r.status == "ok" and "after" in r.results[0]["text/plain"], r.text
    assert not marker.exists()  # (and no process is left that could make it: pgrep above)


def test_an_interrupted_python_prompt_is_aborted_not_left_running(kernel, server):
    """``session.prompt()`` from a cell runs on a helper thread; interrupting the cell now stops
    that run and records its abort (before, it went on in the background holding the session)."""
    server.add(Turn([text("The first half."), delay(8), text(" Never shown.")]))
    msg_id = kernel.kc.execute("from forge_jupyter import Forge\n"
                               "import os\n"
                               "s = Forge(db='other.duckdb', model='openai/gpt-4o-mini', "
                               "api_base=os.environ['FORGE_API_BASE'], api_key='sk-fake')"
                               ".session('slow')\n"
                               "s.prompt('go slowly')")
    # The first Forge of this kernel imports litellm first: tens of seconds on a loaded machine
    # (two pytest workers on two cores), so the wait for the request is long.
    deadline = time.monotonic() + 120
    while not any("go slowly" in user_text(r) for r in server.requests):
        assert time.monotonic() < deadline, "the prompt never reached the server"
        time.sleep(0.1)
    time.sleep(2.0)  # the first half is read (the server pauses 8 s after it)
    kernel.km.interrupt_kernel()
    reply = kernel.reply(msg_id, timeout=30)
    assert reply["content"]["ename"] == "KeyboardInterrupt"
    r = kernel.run("m = s.last\nprint(s.running, m.role, m.status, repr(m.text))")
    assert r.stdout.strip() == "False assistant aborted 'The first half.'", r.text
