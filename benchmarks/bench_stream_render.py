"""Long answers streamed into JupyterLab: the main thread's long tasks while a ~30k-character
Markdown answer streams, before (all the Markdown rendered again on every update) and after
(finished blocks kept, labextension/src/render/stream.ts; "kept" rows), after the finished
blocks off screen are skipped by layout and paint too (content-visibility on .forge-md-live,
widget.css; "after" rows), and after the views draw together in paced frames
(labextension/src/render/frames.ts; "paced" rows), in the cell alone and in the cell with the
side panel open (the panel shows the same turn: two views on one main thread, the panel
following the answer's end). The last two rows run the page's main thread four times slower
while it streams (Chromium's CPU throttling), as on a machine busy with other work.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_stream_render.py [--small]

One JupyterLab (the browser tests' helpers), Debian's Chromium, the fake model server; each
stream collects PerformanceObserver('longtask') entries between the answer's first blocks and
the cell's end. "before" is the same bundle with window.forgeRenderWhole set, which selects the
old path in TurnView; "kept" sets window.forgeLayOutAll (every kept block laid out each frame);
the rows before "paced" set window.forgeFramePerView (each view in an animation frame of its
own). All rows share the one-pass sanitizing of an update and the panel's same-frame follow.

Measured on a 2-core machine shared with other work (load 2.8-4; the figures move by a few
points from run to run), 2026-12-04. Share of the stream's time in long tasks / the worst:

    renderer views         cpu   stream  long tasks  share   worst count
    before   cell           1x    16.6s       4.88s  29.3%   193ms    67
    kept     cell           1x    17.0s       0.05s   0.3%    52ms     1
    after    cell           1x    16.7s       0.15s   0.9%    81ms     2
    paced    cell           1x    16.6s       0.11s   0.7%    57ms     2
    before   cell + panel   1x    16.8s      11.82s  70.3%   337ms   118
    kept     cell + panel   1x    17.0s       0.23s   1.4%   119ms     3
    after    cell + panel   1x    16.9s       0.35s   2.1%   140ms     4
    paced    cell + panel   1x    17.1s       0.50s   2.9%   116ms     7
    after    cell + panel   4x    18.6s      14.42s  77.4%   443ms    99
    paced    cell + panel   4x    20.3s       7.54s  37.1%   729ms    57

The same day, same machine, the code before the paced frames, the one-pass sanitizing and the
same-frame follow: after, cell 3.9% / 96 ms, cell + panel 2.0% / 116 ms (and 4.7-8.7% /
111-121 ms in other runs); the panel kept the main thread busy 74-81% of the stream (Chromium's
TaskDuration) against 41% now, which is why any other load turned its frames into long tasks
(27% / 258 ms at load ~12). With the panel open at 1x the target (< 10% of the stream in long
tasks, none over 200 ms) is met; at 4x it is not: each drawing frame there costs 80-300 ms, most
of it the browser styling, laying out and painting a big JupyterLab page, and the worst task is
the stream's end, where the panel lays out the whole finished answer at once (its blocks lose
content-visibility) while the cell swaps its widget for the record.
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

# (name, what the page runs): the renderers in the order they were built.
MODES = {
    "before": {"whole": True, "frame_per_view": True},
    "kept": {"lay_out_all": True, "frame_per_view": True},
    "after": {"frame_per_view": True},
    "paced": {},
}


def main(toy: bool = False) -> None:
    if not os.path.exists(CHROMIUM):
        print(f"{CHROMIUM} is missing: nothing measured")
        return
    from playwright.sync_api import sync_playwright

    chars = 3_000 if toy else 30_000
    answer = long_answer(chars)
    print(f"a {len(answer):,}-character Markdown answer, 20 characters a chunk, 10 ms apart;"
          f" load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'renderer':8} {'views':12} {'cpu':>4} {'stream':>8} {'long tasks':>11} {'share':>6} {'worst':>7} {'count':>5}")
    # small: one pair, in time; full: every renderer in the cell and with the panel, then the
    # last two with the panel on a main thread four times slower (a machine busy elsewhere)
    runs = [(True, mode, 1.0) for mode in ("after", "paced")] if toy else \
        [(panel, mode, 1.0) for panel in (False, True) for mode in MODES] + \
        [(True, mode, 4.0) for mode in ("after", "paced")]
    with FakeModelServer() as server, tempfile.TemporaryDirectory() as tmp, \
            running_lab(kernel_env(server, Path(tmp)), Path(tmp)) as lab, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for i, (panel, mode, slowdown) in enumerate(runs):
                context = browser.new_context(viewport={"width": 1280, "height": 1000})
                page = context.new_page()
                page.set_default_timeout(60_000)
                name = f"{i}_{mode}_{'panel' if panel else 'cell'}.ipynb"
                got = stream_long_answer(page, lab, server, name, answer, panel=panel, slowdown=slowdown,
                                         **MODES[mode])
                context.close()
                lab.shutdown_kernels()
                views = "cell + panel" if panel else "cell"
                print(f"{mode:8} {views:12} {slowdown:3.0f}x {got.stream_ms / 1000:7.1f}s"
                      f" {got.long_ms / 1000:10.2f}s {got.share:6.1%} {got.worst_ms:5.0f}ms {got.count:5}",
                      flush=True)
        finally:
            browser.close()


if __name__ == "__main__":
    main(small())
