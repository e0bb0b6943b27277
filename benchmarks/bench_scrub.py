"""What scrubbing secrets costs (issue 10, item 4). Prints figures.

    .venv/bin/python benchmarks/bench_scrub.py

1. Processor throughput with one subscriber: the write entry scrubbing every delta as a stream
   (what runs) against the same write entry passing deltas on unscrubbed (what ran before) —
   interleaved rounds, medians, ratio. Target ≥ 100,000 deltas/s scrubbed.
2. Bulk scrubbing (tool outputs, saved full outputs, exports): MB/s over text with no secret
   (prose, a DataFrame's repr, Python source) and over text full of them.
3. One streamed delta through ``StreamScrubber.feed``: µs each.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from _small import small  # noqa: E402 — benchmarks/ is the script's folder

from forge_jupyter import llm  # noqa: E402
from forge_jupyter.bus import Bus, PartDelta  # noqa: E402
from forge_jupyter.message import Message, SessionInfo, Tokens  # noqa: E402
from forge_jupyter.scrub import Scrubber  # noqa: E402
from forge_jupyter.session.context import RunConfig, RunContext  # noqa: E402
from forge_jupyter.session.processor import Processor  # noqa: E402
from forge_jupyter.session.writer import Writer  # noqa: E402
from forge_jupyter.store.inmemory.store import MemoryStore  # noqa: E402
from forge_jupyter.store.projection import Projection  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


class UnscrubbedWriter(Writer):
    """The delta path as it was before scrubbing: every fragment straight to the bus."""

    def part_delta(self, part, field: str, delta: str) -> None:
        bus = self.bus
        if bus.has_subscribers:
            bus.publish(PartDelta(part.session_id, part.message_id, part.id, field, delta))


def _throughput(writer_cls: type[Writer], deltas: int) -> float:
    events = [llm.TextStart(), *(llm.TextDelta("tok ") for _ in range(deltas)), llm.TextEnd(),
              llm.StepFinish("stop", Tokens(input=10, output=deltas), 0.0, "openai/x")]

    async def source(_request):
        for e in events:
            yield e

    bus = Bus()
    seen: list = []
    bus.subscribe(seen.append)
    store = MemoryStore()
    info = store.create_session(SessionInfo())
    writer = writer_cls(Projection(store), bus, Scrubber.from_environment())
    user = Message(session_id=info.id, role="user", status="completed")
    assistant = Message(session_id=info.id, role="assistant", parent_id=user.id)
    for m in (user, assistant):
        writer.update_message(m)
        writer.append(info.id, m.id)
    ctx = RunContext(session=info, writer=writer, bus=bus, model="openai/x", agent="build",
                     system="", tools={}, params={}, config=RunConfig(doom_loop_threshold=0),
                     view_ids=[user.id, assistant.id])
    request = llm.LLMRequest(model="openai/x", system="", messages=[])
    t = time.perf_counter()
    asyncio.run(Processor(ctx, assistant, source=source).process(request))
    return deltas / (time.perf_counter() - t)


def processor_throughput(deltas: int = 100_000, rounds: int = 5) -> None:
    results: dict[str, list[float]] = {"scrubbed": [], "unscrubbed": []}
    for _ in range(rounds):
        results["unscrubbed"].append(_throughput(UnscrubbedWriter, deltas))
        results["scrubbed"].append(_throughput(Writer, deltas))
    before, after = (statistics.median(results[k]) for k in ("unscrubbed", "scrubbed"))
    print(f"processor throughput, one subscriber: deltas unscrubbed {before:,.0f}/s, scrubbed "
          f"{after:,.0f}/s → ratio {after / before:.2f} (target ≥ 100,000/s scrubbed)")


def bulk(megabytes: float = 4.0) -> None:
    import numpy as np
    import pandas as pd

    scrubber = Scrubber.from_environment(extra=[("MY_SERVICE_PASSWORD", "hunter2pass!")])
    prose = ("The analyst reads the file, computes the mean of every column and reports the "
             "missing values per column, then plots the result by month. ")
    frame = pd.DataFrame(np.random.default_rng(0).random((2000, 6)), columns=list("abcdef"))
    code = "".join(p.read_text() for p in sorted((ROOT / "forge_jupyter" / "session").glob("*.py")))
    leaky = ('{"GITHUB_TOKEN": "ghp_' + "a" * 36 + '", "url": "postgresql://u:hunter2pass!@h/db", '
             '"note": "an ordinary line of text between them"}\n')
    size = int(megabytes * 1e6)
    for label, unit in (("prose", prose), ("DataFrame repr", frame.to_string() + "\n"),
                        ("Python source", code), ("a secret every 160 bytes", leaky)):
        text = (unit * (size // len(unit) + 1))[:size]
        runs = []
        for _ in range(3):
            t = time.perf_counter()
            scrubber(text)
            runs.append(time.perf_counter() - t)
        print(f"bulk scrub [{label:24}]: {size / min(runs) / 1e6:6.1f} MB/s")


def delta_cost(n: int = 200_000) -> None:
    scrubber = Scrubber.from_environment()
    words = ["The ", "mean ", "of ", "column ", "`price` ", "is ", "42.7", ", ", "and ", "the\n"]
    stream = scrubber.stream()
    t = time.perf_counter()
    for i in range(n):
        stream.feed(words[i % len(words)])
    per = (time.perf_counter() - t) / n
    print(f"StreamScrubber.feed: {per * 1e6:.2f} µs a delta (model text, word-sized pieces)")


if __name__ == "__main__":
    print(f"python {sys.version.split()[0]}")
    toy = small()
    processor_throughput(**({"deltas": 5_000, "rounds": 1} if toy else {}))
    delta_cost(**({"n": 5_000} if toy else {}))
    bulk(**({"megabytes": 0.1} if toy else {}))
