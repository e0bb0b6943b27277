"""What knowing many secrets costs the streamed delta path (issue 24, class 5). Prints figures.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_scrub_env.py [--small]

The environment gets ~100 secret values (random keys under secret names, as a CI runner or a
cloud notebook has them); then, with the scrubber built from that environment:

1. ``StreamScrubber.feed`` per word-sized delta of model text (µs), and per line-sized delta;
2. one scrub of a 64 KB tool output (MB/s).

Run it against two trees (``PYTHONPATH=old`` and ``PYTHONPATH=new``) and compare: the figures
are absolute, so ratios are read side by side.
"""

from __future__ import annotations

import os
import random
import secrets
import sys
import time

SMALL = "--small" in sys.argv
rng = random.Random(7)
for i in range(100):
    kind = i % 4
    value = (secrets.token_urlsafe(24) if kind == 0 else secrets.token_hex(20) if kind == 1
             else "sk-" + secrets.token_urlsafe(30) if kind == 2 else secrets.token_urlsafe(12))
    os.environ[f"SERVICE{i}_TOKEN"] = value

from forge_jupyter.scrub import Scrubber  # noqa: E402


def per_delta(n: int) -> None:
    scrubber = Scrubber.from_environment()
    words = ["The ", "mean ", "of ", "column ", "`price` ", "is ", "42.7", ", ", "and ", "the\n"]
    lines = ["The mean of column `price` is 42.7 and the median is 40.1, over 1,204 rows.\n",
             "x = df.groupby('month')['price'].mean()  # per month\n"]
    for label, pieces in (("word", words), ("line", lines)):
        stream = scrubber.stream()
        t = time.perf_counter()
        for i in range(n):
            stream.feed(pieces[i % len(pieces)])
        print(f"feed per {label} delta: {(time.perf_counter() - t) / n * 1e6:7.2f} µs")


def bulk() -> None:
    scrubber = Scrubber.from_environment()
    unit = "The analyst reads the file, computes means per column and plots them by month.\n"
    text = (unit * (65536 // len(unit) + 1))[:65536]
    runs = []
    for _ in range(3 if SMALL else 10):
        t = time.perf_counter()
        scrubber(text)
        runs.append(time.perf_counter() - t)
    print(f"scrub a 64 KB output: {len(text) / min(runs) / 1e6:7.1f} MB/s")


if __name__ == "__main__":
    t = time.perf_counter()
    Scrubber.from_environment()
    print(f"build the scrubber from the environment: {(time.perf_counter() - t) * 1e3:.1f} ms")
    per_delta(2_000 if SMALL else 100_000)
    bulk()
