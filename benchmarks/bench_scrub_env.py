"""What knowing many secrets costs the streamed delta path (issue 24, class 5). Prints figures.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_scrub_env.py [--small]

Side by side in one run: a scrubber built from this environment, and one built from it plus
~100 secret values (random keys under secret and plain names, as a CI runner or a cloud
notebook has them; each is also known as base64 and hex). For each: ``StreamScrubber.feed``
per word-sized and per line-sized delta of model text (µs), one scrub of a 64 KB output
(MB/s), and the ratio between them. Run it with ``PYTHONPATH`` at an older tree to compare
versions: the figures print the same way.
"""

from __future__ import annotations

import os
import secrets
import statistics
import sys
import time

from forge_jupyter.scrub import Scrubber

SMALL = "--small" in sys.argv
WORDS = ["The ", "mean ", "of ", "column ", "`price` ", "is ", "42.7", ", ", "and ", "the\n"]
LINES = ["The mean of column `price` is 42.7 and the median is 40.1, over 1,204 rows.\n",
         "x = df.groupby('month')['price'].mean()  # per month\n"]


def many_secrets() -> dict[str, str]:
    out = {}
    for i in range(100):
        kind = i % 4
        out[f"SERVICE{i}_TOKEN" if i % 2 else f"SERVICE{i}_SETTING"] = (
            secrets.token_urlsafe(24) if kind == 0 else secrets.token_hex(20) if kind == 1
            else "sk-" + secrets.token_urlsafe(30) if kind == 2 else secrets.token_urlsafe(12))
    return out


def feed_cost(scrubber: Scrubber, pieces: list[str], n: int) -> float:
    stream = scrubber.stream()
    t = time.perf_counter()
    for i in range(n):
        stream.feed(pieces[i % len(pieces)])
    return (time.perf_counter() - t) / n * 1e6


def bulk_rate(scrubber: Scrubber) -> float:
    unit = "The analyst reads the file, computes means per column and plots them by month.\n"
    text = (unit * (65536 // len(unit) + 1))[:65536]
    runs = []
    for _ in range(3 if SMALL else 10):
        t = time.perf_counter()
        scrubber(text)
        runs.append(time.perf_counter() - t)
    return len(text) / min(runs) / 1e6


def main() -> None:
    plain = Scrubber.from_environment()
    extra = many_secrets()
    os.environ.update(extra)
    t = time.perf_counter()
    known = Scrubber.from_environment()
    built = (time.perf_counter() - t) * 1e3
    for k in extra:
        del os.environ[k]
    print(f"known spellings: {len(plain._known)} → {len(known._known)}; built in {built:.0f} ms")
    n = 2_000 if SMALL else 50_000
    rounds = 1 if SMALL else 3
    for label, measure in (("feed, word delta (µs)", lambda s: feed_cost(s, WORDS, n)),
                           ("feed, line delta (µs)", lambda s: feed_cost(s, LINES, n)),
                           ("scrub 64 KB (MB/s)", bulk_rate)):
        a = statistics.median(measure(plain) for _ in range(rounds))
        b = statistics.median(measure(known) for _ in range(rounds))
        print(f"{label:24} environment only {a:8.2f} | +100 secrets {b:8.2f} | ratio {b / a:.2f}")


if __name__ == "__main__":
    main()
