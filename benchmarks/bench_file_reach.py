"""What the file tools' one check costs (issue 24, classes 3 and 7). Prints ratios.

    .venv/bin/python benchmarks/bench_file_reach.py [--small]

Measured side by side in one run, on a root holding a real DuckDB store: a `read` call of a
small file, and a `grep` over 10,000 files, each done the way it was before the check (the
path located, the file opened by path; os.walk, open() by path) and as it is now (the fence
built from the store's files and the session's outputs, a descriptor walk, every file opened
O_NONBLOCK | O_NOFOLLOW and checked on its descriptor). Best of alternated rounds.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import time
from pathlib import Path

from forge_jupyter.store.duckdb.store import DuckDBStore
from forge_jupyter.tools.base import ToolContext
from forge_jupyter.tools.grep import grep
from forge_jupyter.tools.nofollow import open_inside
from forge_jupyter.tools.paths import SKIP_DIRS, iter_lines, locate, looks_binary, session_root
from forge_jupyter.tools.read import _page, read


def read_before(ctx: ToolContext, path: str) -> str:
    """`read` as it was: located, then opened from the root without following links."""
    located = locate(session_root(ctx, "read"), path, must_exist=True, allow=(ctx.output_dir,))
    if located.path.is_dir():
        raise AssertionError("a file was meant")
    with open_inside(located) as f:
        return _page(f, located.shown, 0, 2000).output


def grep_before(root: str, pattern: str) -> int:
    """`grep` as it was: os.walk lists every file, then each is opened by its path."""
    rx = re.compile(pattern)
    files = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        files += [Path(dirpath, n) for n in sorted(filenames)]
    found = 0
    for file in files:
        with open(file, "rb") as f:
            if looks_binary(f.read(8192)):
                continue
        with open(file, "rb") as f:
            for body, _ in iter_lines(f, 1 << 20):
                found += bool(rx.search(body.decode("utf-8", "replace")))
    return found


def best(fn, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main(small: bool = False) -> None:
    n_files, reads, rounds = (1_000, 200, 3) if small else (10_000, 2_000, 5)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp, "root")
        for i in range(n_files):
            folder = root / f"d{i // 100:03d}"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"f{i:05d}.txt").write_text(f"line one\nneedle {i}\nline three\n")
        store = DuckDBStore(root / "history.duckdb")
        ctx = ToolContext(session_id="ses_bench", message_id="m", call_id="c", part_id="p",
                          store=store, root=str(root),
                          output_dir=str(root / "outputs" / "ses_bench"))
        rel = "d000/f00000.txt"
        assert read_before(ctx, rel) == read(rel, ctx=ctx).output
        assert grep_before(str(root), "needle") == n_files == \
            grep("needle", ctx=ctx).metadata["matches"]

        def reads_before() -> None:
            for _ in range(reads):
                read_before(ctx, rel)

        def reads_now() -> None:
            for _ in range(reads):
                read(rel, ctx=ctx)

        timed = {}
        for _ in range(rounds):  # alternated, so both see the same machine
            for label, fn in (("read before", reads_before), ("read now", reads_now),
                              ("grep before", lambda: grep_before(str(root), "needle")),
                              ("grep now", lambda: grep("needle", ctx=ctx))):
                timed[label] = min(timed.get(label, float("inf")), best(fn, 1))
        store.close()
    rb, rn = timed["read before"] / reads * 1e6, timed["read now"] / reads * 1e6
    gb, gn = timed["grep before"] * 1e3, timed["grep now"] * 1e3
    print(f"read of a 3-line file: before {rb:.0f} µs, now {rn:.0f} µs per call ({rn / rb:.2f}×)")
    print(f"grep over {n_files:,} files: before {gb:.0f} ms, now {gn:.0f} ms ({gn / gb:.2f}×)")


if __name__ == "__main__":
    main(small="--small" in sys.argv)
