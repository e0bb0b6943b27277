"""Poisoned sessions through ``%%forge`` in a real kernel (session/poisoned.py): a notebook's
current session idle past ``Forge.session_max_age`` after repeated tool failures is set
aside, and the next cell starts fresh and says so. Real time passes (a 1 s max age), the
model is the fake server through litellm, the store a DuckDB file."""

from __future__ import annotations

import json
import time

import pytest

from forge_jupyter.testing import Turn, tool_call
from tests.notebook.nb_kernel import forge_kernel
from tests.notebook.replay_nb import notebook, run, shown

CTRL = "get_ipython()._forge_magics.controller"
IDLE = 1.6  # seconds slept: past the kernel's 1 s max age


def failing(*tickers: str) -> list[Turn]:
    """The model calls a tool the notebook does not have, once per ticker, then gives up."""
    return [Turn([tool_call("fetch_price", {"ticker": t})]) for t in tickers] + [
        Turn.text("The price tool keeps failing; I give up.")]


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return tmp_path_factory.mktemp("nb")


def env(root) -> dict[str, str]:
    return {"FORGE_SESSION_MAX_AGE": "1s", "FORGE_REPLAY": "off",
            "JPY_SESSION_NAME": str(root / "prices.ipynb")}


@pytest.fixture(scope="module")
def kernel(model_server, root):
    k = forge_kernel(model_server.openai_base, root, env(root))
    yield k
    k.close()


def current(kernel) -> str:
    r = kernel.run(f"print({CTRL}.current_session_id)")
    assert r.status == "ok", r.stderr
    return r.stdout.strip()


def fresh(kernel) -> str:
    """A new current session for the test, and the kernel's max age back at 1 s."""
    kernel.run("%config Forge.session_max_age = '1s'")
    r = kernel.run("%forge new")
    assert r.status == "ok", r.stderr
    return current(kernel)


def sent(server) -> str:
    return json.dumps(server.requests[-1].messages)


def test_a_poisoned_idle_session_is_set_aside_and_the_next_cell_starts_fresh(kernel, server):
    old = fresh(kernel)
    server.add(*failing("ACME", "INIT", "GLOBX"))
    first = kernel.run("%%forge\nWhat do ACME, INIT and GLOBX trade at?")
    assert first.status == "ok", first.stderr
    assert "fresh session" not in first.stdout
    time.sleep(IDLE)

    server.add(Turn.text("Starting over: which price source should I use?"))
    r = kernel.run("%%forge\nLet's get those prices.")
    assert r.status == "ok", r.stderr
    new = current(kernel)
    assert new != old
    # said before the turn, as a notice: which session, why, and how to get back to it
    note = next(line for line in r.stdout.splitlines() if line.startswith("note: "))
    assert f"Started a fresh session {new}" in note and f"session {old} had been idle" in note
    assert "its last 3 tool calls failed (fetch_price)" in note
    assert f"%forge use {old}" in note and "Forge.session_max_age" in note
    assert "Starting over" in r.stdout
    # the model was asked afresh: nothing of the old session's history went with it
    assert "ACME" not in sent(server) and "fetch_price" not in sent(server)
    assert "Let's get those prices." in sent(server)

    # the old session is kept and readable; the new turn is in the new session
    check = kernel.run(
        f"f = {CTRL}.forge\n"
        f"print(sorted(f.sessions().session_id.tolist()) == sorted([{old!r}, {new!r}]) or "
        "f.sessions().session_id.tolist())\n"
        f"print(f.history({old!r}).role.tolist())\n"
        f"print([m.text for m in f.session({new!r}).messages()])\n"
        f"print(f.session({new!r}).info.metadata.get('set_aside'))\n"
        f"print(f.events({old!r}, type='session.set_aside').data.tolist())")
    assert check.status == "ok", check.stderr
    sessions_ok, old_roles, new_texts, set_aside, events = check.stdout.strip().splitlines()[-5:]
    assert "True" in sessions_ok or old in sessions_ok
    assert old_roles.count("'assistant'") == 4 and old_roles.count("'user'") == 1
    assert new_texts == str(["Let's get those prices.",
                             "Starting over: which price source should I use?"])
    assert set_aside == old
    assert f'"by": "{new}"' in events and '"failed_calls": 3' in events


def test_a_healthy_idle_session_is_kept(kernel, server):
    old = fresh(kernel)
    server.add(Turn.text("ACME trades at 101."))
    kernel.run("%%forge\nWhat does ACME trade at?")
    time.sleep(IDLE)
    server.add(Turn.text("And INIT at 7."))
    r = kernel.run("%%forge\nAnd INIT?")
    assert r.status == "ok", r.stderr
    assert current(kernel) == old and "fresh session" not in r.stdout
    assert "What does ACME trade at?" in sent(server)  # the history went with it


def failed_then_idle(kernel, server) -> str:
    """A turn whose tool calls all fail, then the kernel's max age passes: the cell after."""
    server.add(*failing("A", "B", "C"))
    kernel.run("%%forge\nPrices?")
    time.sleep(IDLE)
    server.add(Turn.text("Retrying."), Turn.text("Once more."))
    r = kernel.run("%%forge\nThe service is back, try again.")
    assert r.status == "ok", r.stderr
    return r.stdout


def test_a_poisoned_but_recent_session_is_kept(kernel, server):
    old = fresh(kernel)
    kernel.run("%config Forge.session_max_age = '1h'")
    shown = failed_then_idle(kernel, server)
    assert current(kernel) == old and "fresh session" not in shown
    assert "fetch_price" in sent(server)  # it sees its failures, and the person's word


def test_zero_turns_it_off(kernel, server):
    old = fresh(kernel)
    kernel.run("%config Forge.session_max_age = 0")
    shown = failed_then_idle(kernel, server)
    assert current(kernel) == old and "fresh session" not in shown


def test_a_session_the_person_chose_is_kept(kernel, server):
    fresh(kernel)
    kernel.run("%forge new chosen")
    kernel.run("%forge new other")
    assert kernel.run("%forge use chosen").status == "ok"
    chosen = current(kernel)
    shown = failed_then_idle(kernel, server)
    assert current(kernel) == chosen and "fresh session" not in shown
    r = kernel.run("%%forge -s chosen\nAnd again.")  # by name in the cell: kept as well
    assert r.status == "ok", r.stderr
    assert "fresh session" not in r.stdout and "fetch_price" in sent(server)


def test_a_setting_it_cannot_read_is_refused_with_the_spellings(kernel):
    fresh(kernel)  # %config Forge.session_max_age = '1s'
    r = kernel.run("%config Forge.session_max_age = 'soon'")
    assert "like '30m', '1h' or '2d'" in r.stderr + r.stdout + json.dumps(r.error)
    shown = kernel.run("_c = %forge config\nprint(_c.loc['session_max_age'].tolist())")
    assert shown.stdout.strip().startswith("['1s', ")  # the refused value changed nothing


def test_after_a_kernel_restart_idle_is_read_from_the_store(kernel, server, root):
    old = fresh(kernel)
    server.add(*failing("A", "B", "C"))
    kernel.run("%%forge\nPrices?")
    time.sleep(IDLE)
    restarted = forge_kernel(server.openai_base, root, env(root))  # a new process, same file
    try:
        server.add(Turn.text("Fresh."))
        r = restarted.run("%%forge\nPrices, please.")
        assert r.status == "ok", r.stderr
        assert f"session {old} had been idle" in r.stdout
        assert current(restarted) != old and "Prices?" not in sent(server)
    finally:
        restarted.close()


# nbclient twice (Restart & Run All): out of the inner loop
@pytest.mark.slow
def test_restart_and_run_all_replays_the_fresh_start(tmp_path, fake_model_server):
    """A notebook whose third cell started a fresh session replays it into a fresh session
    again — no model request on the second run, in strict mode."""
    server = fake_model_server
    nb = notebook("%%forge\nWhat do A, B and C trade at?",
                  "import time; time.sleep(1.6)",
                  "%%forge\nLet's get those prices.")
    server.add(*failing("A", "B", "C"), Turn.text("Starting over."))
    age = {"FORGE_SESSION_MAX_AGE": "1s"}
    first = run(nb, tmp_path, server.openai_base, env=age)
    assert "Started a fresh session" in shown(first.cells[3])
    asked = len(server.requests)
    assert asked == 5
    second = run(nb, tmp_path, server.openai_base, env={**age, "FORGE_REPLAY": "strict"})
    assert len(server.requests) == asked  # everything replayed
    assert "Replayed" in shown(second.cells[3]) and "Starting over." in shown(second.cells[3])
    third = run(nb, tmp_path, server.openai_base, env={**age, "FORGE_REPLAY": "strict"})
    assert len(server.requests) == asked and "Starting over." in shown(third.cells[3])
