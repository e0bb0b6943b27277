"""Notebook-surface benchmarks (issue 6). Prints figures.

    .venv/bin/python benchmarks/bench_notebook.py

- `%load_ext forge_jupyter` time in a real kernel (target ≤ 0.3 s; litellm not imported).
- Time from sending a `%%forge` cell to the first request byte at the fake model server:
  the first cell of a kernel (it pays litellm's import) and a warm one.
(Comm messages per second during a fast stream: benchmarks/bench_widget.py.)
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "notebook"))

from nb_kernel import Kernel  # noqa: E402

from forge_jupyter.testing import FakeModelServer, Turn  # noqa: E402


def main() -> None:
    with FakeModelServer() as server, tempfile.TemporaryDirectory() as tmp:
        env = {"FORGE_MODEL": "openai/gpt-4o-mini", "FORGE_API_BASE": server.openai_base,
               "FORGE_API_KEY": "sk-fake", "FORGE_DB": str(Path(tmp) / "b.duckdb"),
               "FORGE_WIDGET": "off"}
        loads = []
        for _ in range(3):
            k = Kernel(env, cwd=tmp)
            r = k.run("import time as _t; _s = _t.perf_counter()\n"
                      "get_ipython().run_line_magic('load_ext', 'forge_jupyter')\n"
                      "import sys; print(_t.perf_counter() - _s, 'litellm' in sys.modules)")
            seconds, imported = r.stdout.split()
            loads.append(float(seconds))
            k.close()
        print(f"%load_ext forge_jupyter: {statistics.median(loads) * 1000:.0f} ms median of 3 "
              f"(target ≤ 300 ms); litellm imported: {imported}")

        k = Kernel(env, cwd=tmp)
        k.run("%load_ext forge_jupyter")
        firsts = []
        for i in range(4):
            server.add(Turn.text("ok"))
            n = len(server.requests)
            sent = time.monotonic()  # CLOCK_MONOTONIC is one clock for every process on Linux
            k.run(f"%%forge\nquestion {i}")
            firsts.append(server.requests[n].received_at - sent)
        k.close()
        print(f"cell start → first request byte: first cell {firsts[0] * 1000:.0f} ms (imports "
              f"litellm), warm cells {statistics.median(firsts[1:]) * 1000:.0f} ms median")


if __name__ == "__main__":
    main()
