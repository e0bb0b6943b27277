"""Time and memory to truncate a 100 MB tool output: string form, streaming form, and a naive
baseline (encode, split, write in one go), side by side.

    /work/venv/bin/python benchmarks/bench_truncate.py

Each case runs in a fresh process so its peak RSS is its own. "RSS growth" is the peak
resident memory during the truncation minus the resident memory just before it (the 100 MB
string, where there is one, is already built); "traced peak" is tracemalloc's peak over the
same call, in a second run.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

from _small import small  # noqa: E402 — benchmarks/ is the script's folder

from forge_jupyter.tools.truncate import MAX_BYTES, MAX_LINES, BoundedOutput, truncate

MB = 1024 * 1024
BLOCK = "".join(f"{i:09d} " + "x" * 89 + "\n" for i in range(1024))  # 100 KiB, 1,024 lines
SMALL = small()  # before main() reads sys.argv
BLOCKS = 16 if SMALL else 1024  # 100 MiB in all (1.6 MiB small)


def naive(text: str, output_dir: Path, name: str) -> str:
    """The obvious way: the whole output encoded and split in memory, then written."""
    data = text.encode()
    lines = text.split("\n")
    head = "\n".join(lines[:MAX_LINES])[:MAX_BYTES]
    (output_dir / f"{name}.txt").write_bytes(data)
    return head


def string_form(out: Path) -> Iterator[None]:
    text = BLOCK * BLOCKS
    yield
    truncate(text, output_dir=out, name="string")


def streaming_form(out: Path) -> Iterator[None]:
    yield
    stream = BoundedOutput(out, "stream")
    for i in range(BLOCKS):
        stream.write(f"{i:04d}" + BLOCK[4:])  # a fresh string each time, as a producer would
    stream.result()


def naive_form(out: Path) -> Iterator[None]:
    text = BLOCK * BLOCKS
    yield
    naive(text, out, "naive")


CASES = {"string": string_form, "streaming": streaming_form, "naive": naive_form}


def rss_now() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()


def measure(case: str) -> dict[str, float]:
    """Run one case twice (timed, then traced) in this process."""
    with tempfile.TemporaryDirectory() as d:
        steps = CASES[case](Path(d))
        next(steps)  # build the input
        before = rss_now()
        start = time.perf_counter()
        next(steps, None)
        seconds = time.perf_counter() - start
        rss_growth = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
        steps = CASES[case](Path(d))
        next(steps)
        tracemalloc.start()
        next(steps, None)
        traced = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return {"seconds": seconds, "rss_growth_mb": max(rss_growth, 0) / MB, "traced_peak_mb": traced / MB}


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--case":
        print(json.dumps(measure(sys.argv[2])))
        return
    results = {}
    for case in CASES:
        run = subprocess.run([sys.executable, __file__, "--case", case, *(["--small"] if SMALL else [])],
                             capture_output=True, text=True, check=True)
        results[case] = json.loads(run.stdout)
    print(f"Truncating a {len(BLOCK) * BLOCKS / MB:.0f} MB output ({len(BLOCK.splitlines()) * BLOCKS:,} lines)")
    print(f"{'case':<10} {'time (s)':>9} {'MB/s':>7} {'RSS growth (MB)':>16} {'traced peak (MB)':>17}")
    for case, r in results.items():
        rate = len(BLOCK) * BLOCKS / MB / r["seconds"]
        print(f"{case:<10} {r['seconds']:>9.3f} {rate:>7.0f} {r['rss_growth_mb']:>16.1f} {r['traced_peak_mb']:>17.2f}")
    base = results["naive"]
    for case in ("string", "streaming"):
        r = results[case]
        print(f"{case} vs naive: time ×{r['seconds'] / base['seconds']:.2f}, "
              f"traced peak ×{r['traced_peak_mb'] / base['traced_peak_mb']:.3f}")


if __name__ == "__main__":
    main()
