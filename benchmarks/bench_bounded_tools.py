"""What the bounds on tools' work cost on the hot paths (issue 24, class 3). Prints ratios.

    .venv/bin/python benchmarks/bench_bounded_tools.py [--small]

Side by side in one run, each against what it replaced:
- a file tool call (``read`` of a small file): a tool thread of its own (tools/threads.py)
  against ``asyncio.to_thread`` (the loop's default executor);
- ``grep`` over 10,000 files (40 lines each): the ``regex`` engine with a deadline, a block
  of lines at a time, the GIL given up (tools/pattern.py) against ``re`` line by line;
- ``glob`` over the same files.
"""

from __future__ import annotations

import asyncio
import re
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from forge_jupyter.tools import glob as glob_module
from forge_jupyter.tools import grep as grep_module
from forge_jupyter.tools.base import ToolContext
from forge_jupyter.tools.read import read_tool


def _best(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def file_tool_call(root: Path, n: int) -> None:
    from forge_jupyter.tools import base

    (root / "small.txt").write_text("one\ntwo\nthree\n")
    ctx = ToolContext(session_id="s", message_id="m", call_id="c", part_id="p", root=str(root))
    tool = read_tool()
    args = {"path": "small.txt"}

    async def calls() -> None:
        for _ in range(n):
            await tool.run(args, ctx)

    now = _best(lambda: asyncio.run(calls()), 3) / n * 1e6
    pooled = base.run_in_tool_thread

    async def default_executor(fn: Callable[..., Any], *args: Any, **_: Any) -> Any:
        return await asyncio.to_thread(fn, *args)

    base.run_in_tool_thread = default_executor  # type: ignore[assignment]
    try:
        before = _best(lambda: asyncio.run(calls()), 3) / n * 1e6
    finally:
        base.run_in_tool_thread = pooled
    print(f"a file tool call (read): {now:.0f} µs in a tool thread, {before:.0f} µs in the "
          f"default executor ({now / before:.2f}×)")


class _RePattern:
    """What grep did before: ``re``, one search per line, no deadline, the GIL held."""

    def __init__(self, pattern: str) -> None:
        self.rx = re.compile(pattern)

    def matching(self, lines: list[str], *_: Any) -> Any:
        search = self.rx.search
        return (i for i, line in enumerate(lines) if search(line))


def _re_full(rx: Any, text: str, **_: Any) -> bool:
    return rx.match(text) is not None


def searches(root: Path, files: int, repeat: int) -> None:
    tree = root / "tree"
    for d in range(files // 100):
        folder = tree / f"d{d:03}"
        folder.mkdir(parents=True)
        for f in range(100):
            (folder / f"f{f:03}.py").write_text(
                "".join(f"    value_{i} = compute(x, {i})  # line {i} of the file\n"
                        for i in range(40)) + ("# TODO: fix\n" if f % 10 == 0 else ""))
    ctx = ToolContext(session_id="s", message_id="m", call_id="c", part_id="p", root=str(tree))

    def run_grep() -> None:
        grep_module.grep(r"TODO|value_39 = \w+", include="*.py", ctx=ctx)

    def run_glob() -> None:
        glob_module.glob_files("**/f0?5.py", ctx=ctx)

    results = {}
    for label, fn in (("grep", run_grep), ("glob", run_glob)):
        now = _best(fn, repeat)
        saved = (grep_module.LinePattern, glob_module.full_match, glob_module.compile_pattern)
        grep_module.LinePattern, glob_module.full_match = _RePattern, _re_full  # type: ignore
        glob_module.compile_pattern = re.compile  # type: ignore[assignment]
        try:
            before = _best(fn, repeat)
        finally:
            grep_module.LinePattern, glob_module.full_match, glob_module.compile_pattern = saved
        results[label] = (now, before)
    for label, (now, before) in results.items():
        print(f"{label} over {files:,} files: {now * 1e3:.0f} ms with the regex engine and "
              f"deadlines, {before * 1e3:.0f} ms with re ({now / before:.2f}×)")


def main(small: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        file_tool_call(root, 200 if small else 2_000)
        searches(root, 1_000 if small else 10_000, 2 if small else 3)


if __name__ == "__main__":
    main("--small" in sys.argv)
