"""A kernel's part in the concurrency test, in a process of its own: a real Forge prompting one
session again and again against the fake model server, writing the same DuckDB file the
Jupyter server reads.

    python prompt_worker.py DB API_BASE TENANT PROMPTS

Prints the session's id, then (when done) a JSON report: prompts run, errors met.
"""

from __future__ import annotations

import json
import os
import sys

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from forge_jupyter import Forge  # noqa: E402


def main(db: str, api_base: str, tenant: str, prompts: int) -> None:
    forge = Forge(db=db, tenant=tenant, model="openai/fake-model", api_base=api_base,
                  api_key="sk-fake", builtin_tools=False, load_plugins=False)
    session = forge.session("busy")
    print(session.id, flush=True)
    errors = []
    for i in range(prompts):
        try:
            answer = session.prompt(f"prompt number {i}")
            if answer.status != "completed":
                errors.append(f"prompt {i}: {answer.status} {answer.error}")
        except Exception as error:  # reported, never hidden: the test asserts there is none
            errors.append(f"prompt {i}: {error!r}")
    forge.close()
    print(json.dumps({"prompts": prompts, "errors": errors}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]))
