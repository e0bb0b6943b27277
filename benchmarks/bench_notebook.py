"""Notebook-surface benchmarks (issues 6 and 12). Prints figures.

    .venv/bin/python benchmarks/bench_notebook.py [--kernels N]

- `%load_ext forge_jupyter` time in a real kernel (target ≤ 0.3 s) and whether litellm was
  already imported when it returned (it must not be: it warms up in the background).
- The first ten minutes: `%load_ext`, a 6 s pause (a person typing the first prompt), then
  two `%%forge` cells; and again with no pause (the first cell sent right after `%load_ext`,
  as Run All of a notebook that asks live does). For each: cell start → the first thing the
  cell shows (the live widget in a widget frontend; the first line of text without one) and
  cell start → the first request byte at the fake model server. The first cell against the second, as a ratio (target ≤ 2×).
  This script is the widget frontend: it answers the widget's comm with the view's ``ready``,
  as the JavaScript does when it renders.
(Comm messages per second during a fast stream: benchmarks/bench_widget.py.)
"""

from __future__ import annotations

import argparse
import os
import queue
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "notebook"))

from _small import HELP  # noqa: E402 — benchmarks/ is the script's folder
from jupyter_client.manager import KernelManager  # noqa: E402
from nb_kernel import Kernel  # noqa: E402

from forge_jupyter.testing import FakeModelServer, Turn  # noqa: E402

PAUSE = 6.0  # seconds between %load_ext and the first cell
WARMUP = "__import__('forge_jupyter.notebook.extension').notebook.extension.controller().warmup"
WARMUP_DONE = f"print({WARMUP}.done)"
WARMUP_TIMES = (f"print(', '.join(f'{{k}} {{v:.1f}} s' for k, v in {WARMUP}.timings.items()))")
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


class Frontend:
    """A kernel and the little of a widget frontend a turn needs: it says ``ready``."""

    def __init__(self, env: dict[str, str], cwd: str) -> None:
        self.km = KernelManager(kernel_name="python3")
        self.km.kernel_spec.argv[0] = sys.executable
        self.km.start_kernel(env={**os.environ, **env}, cwd=cwd)
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)

    def run(self, code: str, timeout: float = 180) -> dict[str, Any]:
        """Run ``code``; when it shows something first (widget or text), and when it ended."""
        sent = time.monotonic()
        msg_id = self.kc.execute(code)
        shown: float | None = None
        while True:
            try:
                msg = self.kc.get_iopub_msg(timeout=timeout)
            except queue.Empty:
                raise TimeoutError(f"no output for {timeout} s running:\n{code}") from None
            kind, content = msg["msg_type"], msg["content"]
            if kind == "comm_open" and content.get("target_name") == "jupyter.widget":
                reply = self.kc.session.msg("comm_msg", {
                    "comm_id": content["comm_id"],
                    "data": {"method": "custom", "content": {"type": "ready", "protocol": 1}}})
                self.kc.shell_channel.send(reply)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if shown is None and ((kind == "display_data" and WIDGET_MIME in content["data"])
                                  or (kind == "stream" and content["text"].strip())):
                shown = time.monotonic()
            if kind == "error":
                raise RuntimeError("\n".join(content["traceback"]))
            if kind == "status" and content["execution_state"] == "idle":
                break
        return {"sent": sent, "shown": shown, "ended": time.monotonic()}

    def value(self, code: str) -> str:
        """What ``code`` prints, stripped."""
        msg_id = self.kc.execute(code)
        out = ""
        while True:
            msg = self.kc.get_iopub_msg(timeout=60)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "stream":
                out += msg["content"]["text"]
            elif msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                return out.strip()

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


def load_ext_times(env: dict[str, str], tmp: str) -> None:
    loads, imported = [], []
    for _ in range(3):
        k = Kernel(env, cwd=tmp)
        r = k.run("import time as _t; _s = _t.perf_counter()\n"
                  "get_ipython().run_line_magic('load_ext', 'forge_jupyter')\n"
                  "import sys; print(_t.perf_counter() - _s, 'litellm' in sys.modules)")
        seconds, was = r.stdout.split()
        loads.append(float(seconds))
        imported.append(was)
        k.close()
    print(f"%load_ext forge_jupyter: {statistics.median(loads) * 1000:.0f} ms median of 3 "
          f"(target ≤ 300 ms); litellm imported when it returned: {', '.join(imported)}")
    if not compiled():
        # a checkout run with PYTHONDONTWRITEBYTECODE (CI's, this machine's) never caches
        # forge's bytecode: each kernel compiles its ~120 modules again (~140 ms here), which
        # an installed package (pip compiles it) does not
        print("  (forge_jupyter has no cached bytecode here: the figure includes compiling its "
              "modules; run once without PYTHONDONTWRITEBYTECODE for an installed package's)")


def compiled() -> bool:
    """Whether forge_jupyter's modules have cached bytecode for this interpreter."""
    import importlib.util

    import forge_jupyter

    cached = importlib.util.cache_from_source(forge_jupyter.__file__)
    return os.path.exists(cached)


def first_ten_minutes(server: FakeModelServer, env: dict[str, str], tmp: str,
                      kernels: int, pause: float) -> None:
    rows = []
    for _ in range(kernels):
        fe = Frontend(env, cwd=tmp)
        fe.run("%load_ext forge_jupyter")
        time.sleep(pause)
        warm = fe.value(WARMUP_DONE)
        cells = []
        for i in range(2):
            server.add(Turn.text("ok"))
            n = len(server.requests)
            r = fe.run(f"%%forge\nquestion {i}")
            # CLOCK_MONOTONIC is one clock for every process on Linux.
            cells.append({"shown": (r["shown"] or r["ended"]) - r["sent"],
                          "request": server.requests[n].received_at - r["sent"]})
        cells[0]["warm_at_first"] = warm == "True"
        cells[0]["warmup"] = fe.value(WARMUP_TIMES)
        fe.close()
        rows.append(cells)
    first_req = statistics.median(c[0]["request"] for c in rows)
    second_req = statistics.median(c[1]["request"] for c in rows)
    first_shown = statistics.median(c[0]["shown"] for c in rows)
    second_shown = statistics.median(c[1]["shown"] for c in rows)
    print(f"\nthe first ten minutes: %load_ext, {pause:.0f} s pause, two %%forge cells "
          f"(median of {kernels} kernels)")
    print(f"  {'':34}{'first cell':>12}{'second cell':>13}{'ratio':>8}")
    print(f"  {'cell start → widget shown':34}{first_shown * 1000:>9.0f} ms"
          f"{second_shown * 1000:>10.0f} ms{first_shown / second_shown:>7.1f}×   (target ≤ 300 ms)")
    print(f"  {'cell start → first request byte':34}{first_req * 1000:>9.0f} ms"
          f"{second_req * 1000:>10.0f} ms{first_req / second_req:>7.1f}×   (target ≤ 2×)")
    for i, cells in enumerate(rows):
        print(f"    kernel {i + 1}: first request {cells[0]['request'] * 1000:.0f} ms, "
              f"second {cells[1]['request'] * 1000:.0f} ms; shown {cells[0]['shown'] * 1000:.0f} / "
              f"{cells[1]['shown'] * 1000:.0f} ms; warm-up "
              f"{'done' if cells[0]['warm_at_first'] else 'NOT done'} at the first cell "
              f"({cells[0]['warmup']})")
    print(f"  (machine load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs: the warm-up "
          "competes with whatever else runs)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kernels", type=int, default=3)
    parser.add_argument("--small", action="store_true", help=HELP)
    args = parser.parse_args()
    if args.small:
        args.kernels = 1
    with FakeModelServer() as server, tempfile.TemporaryDirectory() as tmp:
        base = {"FORGE_MODEL": "openai/gpt-4o-mini", "FORGE_API_BASE": server.openai_base,
                "FORGE_API_KEY": "sk-fake", "FORGE_DB": str(Path(tmp) / "b.duckdb"),
                "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        load_ext_times({**base, "FORGE_WIDGET": "off"}, tmp)
        for pause in (PAUSE, 0.0):
            first_ten_minutes(server, base, tmp, args.kernels, pause)


if __name__ == "__main__":
    main()
