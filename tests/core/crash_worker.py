"""A runner in its own process, for the tests that SIGKILL it (tests/core/test_crash.py).

    python crash_worker.py DB API_BASE SESSION

Builds a Forge on the DuckDB file DB that talks to the fake model server at API_BASE (with one
custom tool, ``slow``), then answers the prompt "go" in SESSION until the script ends or the
test kills the process.
"""

from __future__ import annotations

import os
import sys
import time

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from forge_jupyter import Forge  # noqa: E402


def slow(seconds: float) -> str:
    """Wait that many seconds, then say so.

    seconds: how long to wait
    """
    time.sleep(seconds)
    return f"waited {seconds} s"


def main(db: str, api_base: str, session: str) -> None:
    forge = Forge(db=db, model="openai/fake-model", api_base=api_base, api_key="sk-fake",
                  builtin_tools=False, tools=[slow])
    forge.session(session).prompt("go")


if __name__ == "__main__":
    main(*sys.argv[1:4])
