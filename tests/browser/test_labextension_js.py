"""The front end's own tests (labextension/test/*.test.ts: ``npm test``, type-checked by tsc and
run by ``node --test``) run with the suite, and fail it when one fails."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

LABEXTENSION = Path(__file__).resolve().parents[2] / "labextension"


def test_the_front_ends_node_tests_pass():
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        pytest.skip("node and npm are not installed")
    if not (LABEXTENSION / "node_modules" / "esbuild").exists():
        pytest.skip("labextension/node_modules is missing: run npm install in labextension/")
    done = subprocess.run([npm, "test", "--silent"], cwd=LABEXTENSION, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "NO_COLOR": "1"})
    assert done.returncode == 0, f"npm test failed:\n{done.stdout[-6000:]}\n{done.stderr[-3000:]}"
    # Each test file ran (a file that no longer loads would run no test and could look green).
    for name in ("views sharing one message each add a fragment once",
                 "durations, seconds, money and usage read as the Python side writes them"):
        assert name in done.stdout, done.stdout[-3000:]
    assert "# fail 0" in done.stdout or "ℹ fail 0" in done.stdout, done.stdout[-3000:]
