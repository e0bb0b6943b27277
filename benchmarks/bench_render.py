"""Time to render the static record of a 1,000-part turn (it renders at the end of every turn),
side by side: forge's record (markdown-it-py + nh3, HTML and text), its two libraries alone on
the same input, and the hand-written regex renderer it replaced (read from git, when there is
one).

    .venv/bin/python benchmarks/bench_render.py

Best of several runs each, one process; ratios against the record.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from _small import small  # noqa: E402 — benchmarks/ is the script's folder

from forge_jupyter import render
from forge_jupyter.message import (
    Message,
    ReasoningPart,
    StepFinishPart,
    StepStartPart,
    TextPart,
    Tokens,
    ToolPart,
)
from forge_jupyter.render.markdown import _parser, sanitize_html

ROOT = Path(__file__).resolve().parents[1]
BEFORE = "c567c96"  # the last commit with the regex renderer (forge_jupyter/render.py)
SID = "ses_bench"
PROSE = ("Here is what I found in **sales**: the `region` column has 12 missing values, see "
         "[the docs](https://pandas.pydata.org/docs/) and the list below.\n\n"
         "- north: 4\n- south: 8\n\n| col | missing |\n|---|---|\n| region | 12 |\n\n"
         "```python\ndf[df.region.isna()].head()\n```\n")
THOUGHT = "I should check $x_i$ first, then the <b>nulls</b>. " * 5
OUTPUT = "\n".join(f"row {i}: value {i * 3.5:.2f} <ok> & fine" for i in range(12))


def turn(parts: int = 1000) -> list[Message]:
    """A user message, then steps of 9 parts: reasoning, text, 5 python calls, a footer."""
    user = Message(session_id=SID, role="user", status="completed")
    user.parts = [TextPart(session_id=SID, message_id=user.id, text="Look at sales.")]
    msgs, n, t = [user], 0, 0.0
    while n < parts:
        m = Message(session_id=SID, role="assistant", model="openai/fake-model",
                    status="completed", created_at=t, completed_at=t + 1)
        ps = [StepStartPart(session_id=SID, message_id=m.id),
              ReasoningPart(session_id=SID, message_id=m.id, text=THOUGHT, time_start=t,
                            time_end=t + 0.5),
              TextPart(session_id=SID, message_id=m.id, text=PROSE)]
        ps += [ToolPart(session_id=SID, message_id=m.id, call_id=f"c{n}.{k}", tool="python",
                        state="completed", input={"code": "print(df.head())\nx = 1"},
                        output=OUTPUT, time_start=t, time_end=t + 0.2, title="df.head()")
               for k in range(5)]
        ps.append(StepFinishPart(session_id=SID, message_id=m.id, cost=0.001,
                                 tokens=Tokens(input=1000, output=50), model="openai/fake-model"))
        m.parts = ps[: parts - n]
        n += len(m.parts)
        msgs.append(m)
        t += 1
    return msgs


def before() -> ModuleType | None:
    """The regex renderer as it was at BEFORE, or None without git history."""
    try:
        source = subprocess.run(["git", "show", f"{BEFORE}:forge_jupyter/render.py"], cwd=ROOT,
                                capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    path = Path(tempfile.mkdtemp()) / "render_before.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("forge_jupyter._render_before", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "forge_jupyter"  # its relative import of .model
    spec.loader.exec_module(module)
    return module


def best(fn: Callable[[], object], runs: int = 7) -> float:
    fn()  # warm: the parser and the sanitizer are built on first use
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main(toy: bool = False) -> None:
    msgs = turn(50 if toy else 1000)
    parts = sum(len(m.parts) for m in msgs)
    record = render.turn_work_html(msgs)
    texts = [p.text for m in msgs[1:] for p in m.parts if isinstance(p, (TextPart, ReasoningPart))]
    rows = [
        ("record: turn_work_html + turn_work_text",
         lambda: (render.turn_work_html(msgs), render.turn_work_text(msgs))),
        ("  markdown-it-py alone, on the model's texts", lambda: [_parser().render(t) for t in texts]),
        ("  nh3 alone, on the finished record", lambda: sanitize_html(record)),
    ]
    old = before()
    if old is not None:
        rows.append((f"regex renderer it replaced ({BEFORE}), Markdown",
                     lambda: (old.turn_work_markdown(msgs), old.turn_work_text(msgs))))
    print(f"a turn of {parts:,} parts ({len(texts)} model texts); record {len(record):,} chars")
    base = None
    for name, fn in rows:
        t = best(fn, runs=1 if toy else 7)
        base = base or t
        print(f"{name:<52} {t * 1000:8.1f} ms  {t / base:5.2f}×  {t / parts * 1e6:6.1f} µs/part")
    if old is None:
        print(f"(no git history here: the {BEFORE} renderer is not compared)", file=sys.stderr)


if __name__ == "__main__":
    main(small())
