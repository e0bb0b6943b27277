"""%%forge outside a notebook behaves like any cell magic (%%timeit): terminal IPython (driven
in a real terminal under tmux), ``ipython script.ipy``, and ``run_cell_magic``; its value's
repr is one readable line.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from forge_jupyter.testing import Turn

pytestmark = pytest.mark.slow

IPYTHON = str(Path(sys.executable).with_name("ipython"))
ANSWER = "Hello from the terminal."


@pytest.fixture
def env(server, tmp_path):
    return {**os.environ, "FORGE_MODEL": "openai/gpt-4o-mini", "FORGE_API_BASE": server.openai_base,
            "FORGE_API_KEY": "sk-fake", "FORGE_DB": str(tmp_path / "forge.duckdb"),
            "LITELLM_LOCAL_MODEL_COST_MAP": "True", "IPYTHONDIR": str(tmp_path / "ipython")}


class Terminal:
    """Terminal IPython in a tmux pane: keys in, the rendered screen out."""

    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        self.name = f"forge-{uuid.uuid4().hex[:8]}"
        # A tmux server of its own (-L): a session takes its environment from the server, not
        # from the client that asks for it, so on a shared server (another test's, another
        # pytest worker's) IPython would run with that test's FORGE_API_BASE.
        self.tmux = ["tmux", "-L", self.name]
        command = f"{IPYTHON} --no-banner --colors=NoColor --no-confirm-exit"
        subprocess.run([*self.tmux, "new-session", "-d", "-s", self.name, "-x", "200", "-y", "60",
                        "-c", str(cwd), command], env=env, check=True)

    def keys(self, *keys: str) -> None:
        for k in keys:
            subprocess.run([*self.tmux, "send-keys", "-t", self.name, k], check=True)
            time.sleep(0.3)  # as a person types: each key is its own event

    def screen(self) -> str:
        out = subprocess.run([*self.tmux, "capture-pane", "-p", "-J", "-S", "-200", "-t", self.name],
                             capture_output=True, text=True, check=True).stdout
        return "\n".join(line.rstrip() for line in out.splitlines())

    def wait_for(self, pattern: str, timeout: float = 120) -> str:
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if re.search(pattern, screen):
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"{pattern!r} never showed; the screen:\n{screen}")
            time.sleep(0.2)

    def close(self) -> None:
        subprocess.run([*self.tmux, "kill-server"], capture_output=True)


@pytest.fixture
def terminal(env, tmp_path):
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed (apt-get install tmux)")
    term = Terminal(env, tmp_path)
    yield term
    term.close()


def test_in_terminal_ipython_enter_after_percent_percent_forge_waits_for_the_prompt(terminal, server):
    server.add(Turn.text(ANSWER))
    terminal.wait_for(r"In \[1\]:")
    terminal.keys("%load_ext forge_jupyter", "Enter")
    terminal.wait_for(r"In \[2\]:")
    terminal.keys("%%forge", "Enter")
    screen = terminal.wait_for(r"In \[2\]: %%forge\n\s+\.\.\.:")
    assert "UsageError" not in screen and "empty" not in screen
    terminal.keys("Say hello", "Enter")
    time.sleep(1.0)
    assert not server.requests, "the cell must not run before it is complete"
    terminal.keys("Enter", "Enter")  # a blank line ends a cell magic, as for %%timeit
    screen = terminal.wait_for(r"Out\[2\]: Message\(")
    out = screen[screen.index("Out[2]:"):].split("\nIn [3]")[0].strip()
    assert ANSWER in screen[:screen.index("Out[2]:")]  # streamed as text first
    assert out.count("\n") == 0, f"the value is one line: {out}"
    assert out.startswith("Out[2]: Message(assistant, completed, 1 step, ")
    assert f"text='{ANSWER}'" in out and "TextPart" not in out and "session_id" not in out
    assert server.requests[-1].messages[-1]["content"] == "Say hello"


def test_in_terminal_ipython_one_blank_line_runs_a_typed_forge_cell(terminal, server):
    """Before, IPython's own check ran a typed cell magic only at the second blank line."""
    server.add(Turn.text(ANSWER))
    terminal.wait_for(r"In \[1\]:")
    terminal.keys("%load_ext forge_jupyter", "Enter")
    terminal.wait_for(r"In \[2\]:")
    terminal.keys("%%forge", "Enter", "Enter")  # no prompt yet: Enter on the empty line waits
    terminal.keys("Say hello", "Enter")
    time.sleep(1.0)
    assert not server.requests, "the cell must not run before it is complete"
    terminal.keys("Enter")  # one blank line
    screen = terminal.wait_for(r"Out\[2\]: Message\(")
    assert server.requests[-1].messages[-1]["content"] == "Say hello"
    assert "UsageError" not in screen


def test_ipython_runs_a_script_that_is_a_forge_cell(env, server, tmp_path):
    server.add(Turn.text(ANSWER))
    script = tmp_path / "ask.ipy"
    script.write_text("%%forge\nSay hello\n")
    done = subprocess.run([IPYTHON, "--ext", "forge_jupyter", str(script)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert ANSWER in done.stdout
    assert "not found" not in done.stdout + done.stderr
    assert server.requests[-1].messages[-1]["content"] == "Say hello"


def test_run_cell_magic_runs_a_forge_cell_from_code(env, server, tmp_path):
    server.add(Turn.text(ANSWER))
    script = tmp_path / "ask.ipy"
    script.write_text("%load_ext forge_jupyter\nwhat = 'hello'\n"
                      "answer = get_ipython().run_cell_magic('forge', '', 'Say {what}')\n"
                      "print('status', answer.status, repr(answer.text))\n")
    done = subprocess.run([IPYTHON, str(script)], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert f"status completed {ANSWER!r}" in done.stdout
    assert server.requests[-1].messages[-1]["content"] == "Say hello"
