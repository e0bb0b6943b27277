"""A long Markdown answer streamed into a cell and the side panel, and what it costs the page:
the long tasks (PerformanceObserver 'longtask') while it streams, and whether the first block's
DOM node survived to the end (a finished block is never rendered again). Shared by
tests/browser/test_stream_render.py and benchmarks/bench_stream_render.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from forge_jupyter.testing import FakeModelServer, Turn, text
from tests.browser.lab_helpers import Lab, NotebookPage, forge_cell
from tests.browser.panel_page import PanelPage

LOAD = "%load_ext forge_jupyter"

# Installed before Lab loads: long tasks are buffered from the start.
OBSERVE = """
window.__forgeLong = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) window.__forgeLong.push([e.startTime, e.duration]);
}).observe({ type: 'longtask', buffered: true });
"""

# The first block of each text (cell, panel) marked once four are there (the last two are the
# open tail, rendered again while they grow): it must be the same node at the end.
MARK = """() => {
  const texts = [...document.querySelectorAll('[data-testid=text]')];
  for (const t of texts) { t.__forgeText = true; if (t.firstElementChild) t.firstElementChild.__forgeFirst = true; }
  return texts.map((t) => t.childElementCount);
}"""
KEPT = """() => [...document.querySelectorAll('[data-testid=text]')].map((t) => ({
  panel: !!t.closest('[data-testid=panel-turn]'), text: !!t.__forgeText,
  first: !!(t.firstElementChild && t.firstElementChild.__forgeFirst), chars: t.textContent.length }))"""
# The panel follows the answer's end: its first blocks are far above the view and the browser
# skips laying out and painting what is inside them (content-visibility), so a frame's cost does
# not grow with the answer above the view. Read on the first element inside a block (a block's
# own box stays, at its last height).
SKIPPED = """() => { const t = document.querySelector('[data-testid=panel-turn] [data-testid=text]');
  const inner = t && t.querySelector(':scope > * > *');
  return !!inner && !inner.checkVisibility({ contentVisibilityAuto: true }); }"""


def long_answer(chars: int) -> str:
    """Markdown as a model writes a long answer: headings, paragraphs, lists, tables, code."""
    parts: list[str] = []
    i = 0
    while sum(len(p) + 2 for p in parts) < chars:
        i += 1
        parts += [
            f"## Section {i}: what the data says",
            f"The **{i}th** finding: revenue grew in `region_{i}` while costs stayed flat; "
            "see [the report](https://example.com/report) for the method and its caveats.",
            "\n".join(f"- point {i}.{k}: a *short* remark about the trend" for k in range(4)),
            "| metric | value | change |\n|---|--:|:-:|\n"
            + "\n".join(f"| m{k} | {k * i} | +{k}% |" for k in range(4)),
            f"```python\ndf = load('part_{i}.csv')\nsummary = df.groupby('region').sum()\nprint(summary)\n```",
        ]
    return "\n\n".join(parts)


@dataclass
class Streamed:
    stream_ms: float
    long_ms: float
    worst_ms: float
    count: int
    kept: list[dict[str, Any]]
    panel_skipped: bool = False

    @property
    def share(self) -> float:
        return self.long_ms / self.stream_ms if self.stream_ms else 0.0


def stream_long_answer(page: Any, lab: Lab, script: FakeModelServer, name: str, answer: str,
                       whole: bool = False, panel: bool = True, chunk: int = 20,
                       chunk_delay: float = 0.01, lay_out_all: bool = False, frame_per_view: bool = False,
                       slowdown: float = 1.0) -> Streamed:
    """Stream `answer` into a %%forge cell, with the panel open or not; `whole` selects the
    renderer before incremental rendering (all the Markdown rendered again on every update),
    `lay_out_all` the incremental one before off-screen blocks were skipped by layout and paint,
    `frame_per_view` the drawing before views shared paced frames (render/frames.ts): each view
    in an animation frame of its own. `slowdown` > 1 runs the page's main thread that many times
    slower while it streams (Chromium's CPU throttling), as on a machine busy with other work."""
    page.add_init_script(OBSERVE + ("window.forgeRenderWhole = true;" if whole else "")
                         + ("window.forgeLayOutAll = true;" if lay_out_all else "")
                         + ("window.forgeFramePerView = true;" if frame_per_view else ""))
    script.add(Turn([text(answer, chunk=chunk)], chunk_delay=chunk_delay))
    lab.write_notebook(name, [LOAD, forge_cell("Write a long report.")])
    nb = NotebookPage(page, lab, name).open()
    if panel:
        PanelPage(page).open()
    views = 2 if panel else 1
    nb.run_all()
    page.wait_for_function(f"document.querySelectorAll('[data-testid=text]').length >= {views}"
                           " && [...document.querySelectorAll('[data-testid=text]')]"
                           ".every((t) => t.childElementCount >= 4)", timeout=120_000)
    cdp = page.context.new_cdp_session(page) if slowdown > 1 else None
    if cdp:
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": slowdown})
    t0 = page.evaluate("performance.now()")
    page.evaluate(MARK)
    if panel:  # four times a second while it streams: the browser decides what is off screen
        page.evaluate(f"""() => {{ window.__forgeSkipSeen = false; const skipped = {SKIPPED};
            const poll = setInterval(() => {{ if (skipped()) {{ window.__forgeSkipSeen = true;
                clearInterval(poll); }} }}, 250); }}""")
    # Near the end, while the cell still shows its live widget (the record replaces it).
    last = answer.rsplit("## ", 2)[-2].split(":")[0]
    page.wait_for_function(f"""[...document.querySelectorAll('[data-testid=text]')].length >= {views} &&
        [...document.querySelectorAll('[data-testid=text]')].every((t) => t.textContent.includes({last!r}))""",
                           timeout=300_000, polling=100)  # not each frame: reading 60k characters is a cost
    kept = page.evaluate(KEPT)
    nb.wait_idle(1, timeout=300)
    t1 = page.evaluate("performance.now()")
    if cdp:
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": 1})
        cdp.detach()
    # seen at any time while the answer streamed (only a streaming answer's blocks are skipped)
    skipped = bool(panel and page.evaluate("window.__forgeSkipSeen === true"))
    tasks = [(s, d) for s, d in page.evaluate("window.__forgeLong") if s + d >= t0 and s <= t1]
    return Streamed(stream_ms=t1 - t0, long_ms=sum(d for _, d in tasks),
                    worst_ms=max((d for _, d in tasks), default=0.0), count=len(tasks), kept=kept,
                    panel_skipped=skipped)
