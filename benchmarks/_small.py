"""``--small``: every benchmark's toy size. tests/test_benchmarks.py runs each ``bench_*.py``
with it, so a benchmark that no longer runs fails the suite; its figures mean nothing then
and no test reads them."""

from __future__ import annotations

import sys

HELP = "toy sizes, a few seconds: shows the benchmark still runs (its figures mean nothing)"


def small() -> bool:
    """Whether ``--small`` was given (taken out of ``sys.argv``, for scripts without argparse)."""
    if "--small" in sys.argv:
        sys.argv.remove("--small")
        return True
    return False
