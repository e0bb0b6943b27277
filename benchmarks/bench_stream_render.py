"""Long answers streamed into JupyterLab: the main thread's long tasks while a ~30k-character
Markdown answer streams, before (all the Markdown rendered again on every update) and after
(finished blocks kept, labextension/src/render/stream.ts; "kept" rows) and after the finished
blocks off screen are skipped by layout and paint too (content-visibility on .forge-md-live,
widget.css; "after" rows), in the cell alone and in the cell with the side panel open (the
panel shows the same turn: two views on one main thread, the panel following the answer's end).

    PYTHONPATH=. .venv/bin/python benchmarks/bench_stream_render.py [--small]

One JupyterLab (the browser tests' helpers), Debian's Chromium, the fake model server; each
stream collects PerformanceObserver('longtask') entries between the answer's first blocks and
the cell's end. "before" is the same bundle with window.forgeRenderWhole set, which selects the
old path in TurnView; "kept" sets window.forgeLayOutAll (every kept block laid out each frame).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _small import small  # noqa: E402 — benchmarks/ is the script's folder

from forge_jupyter.testing import FakeModelServer  # noqa: E402
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from tests.browser.kernel_frontend import kernel_env  # noqa: E402
from tests.browser.lab_helpers import running_lab  # noqa: E402
from tests.browser.stream_probe import long_answer, stream_long_answer  # noqa: E402


def main(toy: bool = False) -> None:
    if not os.path.exists(CHROMIUM):
        print(f"{CHROMIUM} is missing: nothing measured")
        return
    from playwright.sync_api import sync_playwright

    chars = 3_000 if toy else 30_000
    answer = long_answer(chars)
    print(f"a {len(answer):,}-character Markdown answer, 20 characters a chunk, 10 ms apart")
    print(f"{'renderer':8} {'views':12} {'stream':>8} {'long tasks':>11} {'share':>6} {'worst':>7} {'count':>5}")
    with FakeModelServer() as server, tempfile.TemporaryDirectory() as tmp, \
            running_lab(kernel_env(server, Path(tmp)), Path(tmp)) as lab, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for panel in ((True,) if toy else (False, True)):  # small: one pair, in time
                for mode in (("before", "after") if toy else ("before", "kept", "after")):
                    whole = mode == "before"
                    context = browser.new_context(viewport={"width": 1280, "height": 1000})
                    page = context.new_page()
                    page.set_default_timeout(60_000)
                    name = f"{mode}_{'panel' if panel else 'cell'}.ipynb"
                    got = stream_long_answer(page, lab, server, name, answer, whole=whole, panel=panel,
                                             lay_out_all=mode == "kept")
                    context.close()
                    lab.shutdown_kernels()
                    views = "cell + panel" if panel else "cell"
                    print(f"{mode:8} {views:12} {got.stream_ms / 1000:7.1f}s"
                          f" {got.long_ms / 1000:10.2f}s {got.share:6.1%} {got.worst_ms:5.0f}ms {got.count:5}")
        finally:
            browser.close()


if __name__ == "__main__":
    main(small())
