"""Every benchmark still runs: each ``benchmarks/bench_*.py`` at its ``--small`` size, in a
process of its own. Only that it exits 0 and says something is checked — the figures are the
benchmark's business, never a test's (STYLE: benchmarks are not part of pass/fail)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

# Each one a process (most start more: kernels, servers, a checked-out tree): 15 min in all on
# a loaded 2-core machine, so out of the inner loop (`-m "not slow"`).
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = sorted((ROOT / "benchmarks").glob("bench_*.py"))


def test_the_benchmarks_are_found():
    assert len(BENCHMARKS) >= 20, f"expected the benchmarks under {ROOT / 'benchmarks'}"


@pytest.mark.parametrize("bench", BENCHMARKS, ids=lambda p: p.name)
def test_the_benchmark_runs_at_its_small_size(bench: Path, tmp_path: Path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    run = subprocess.run([sys.executable, str(bench), "--small"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, f"{bench.name} --small failed:\n{run.stdout[-2000:]}\n{run.stderr[-4000:]}"
    assert run.stdout.strip(), f"{bench.name} --small printed nothing"
