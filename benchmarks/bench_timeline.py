"""The full timeline of a 50,000-message session, read three ways side by side (prints; not
a test). Issue 12's target: the full timeline at >= 100,000 messages/s.

- **as objects**: ``store.read_timeline`` (what ``Session.messages()`` returns: pydantic
  ``Message`` models, each with its validated ``Part`` models);
- **the objects' floor**: the same number of the same objects built from values already in
  memory — no SQL, no JSON, no validation — plus the one pass the cycle collector makes over
  them afterwards. No read that returns these objects can beat it, so it says what "as
  objects" could still gain;
- **as columns**: ``forge.history(session)`` (the timeline in order: position, role, status,
  tokens, cost, whether the model still sees it, the text) and ``forge.messages(session)`` +
  ``forge.parts(session)`` (every column of every message and part) — the DataFrames a person
  reads a long session with.

Each read runs ``--rounds`` times, alternated (the machine is shared); best and median, and
the load before and after.

    python benchmarks/bench_timeline.py [--messages 50000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _small import HELP  # noqa: E402 — benchmarks/ is the script's folder
from bench_store import _session_ops  # noqa: E402 - the same session bench_store reads

from forge_jupyter import frames  # noqa: E402
from forge_jupyter.message import Message, SessionInfo, Tokens  # noqa: E402
from forge_jupyter.store.duckdb.store import DuckDBStore  # noqa: E402
from forge_jupyter.store.rows_to_models import _built  # noqa: E402


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg()) + f" ({os.cpu_count()} cores)"


def objects_floor(sample: Message, count: int) -> Callable[[], int]:
    """Build ``count`` copies of ``sample`` (its parts and their tokens too) the cheapest way
    a pydantic model can be made — its ``__dict__`` set directly — then let the collector
    make its first pass over them (the pass a read leaves for later; counted here)."""
    message_values = {k: v for k, v in sample.__dict__.items() if k not in ("parts", "tokens")}
    message_fields = set(sample.__pydantic_fields_set__)
    token_values, token_fields = dict(sample.tokens.__dict__), set(Tokens.model_fields)
    parts = [(type(p), {k: v for k, v in p.__dict__.items()}, set(p.__pydantic_fields_set__))
             for p in sample.parts]

    def build() -> int:
        out = []
        gc.disable()
        try:
            for _ in range(count):
                built = []
                for cls, values, fields in parts:
                    values = values.copy()
                    if isinstance(values.get("tokens"), Tokens):
                        values["tokens"] = _built(Tokens, token_values.copy(), token_fields)
                    built.append(_built(cls, values, fields))
                values = message_values.copy()
                values["tokens"] = _built(Tokens, token_values.copy(), token_fields)
                values["parts"] = built
                out.append(_built(Message, values, message_fields))
        finally:
            gc.enable()
        gc.collect(0)  # the youngest generation now holds every object built: one pass
        return len(out)

    return build


def compare(reads: dict[str, Callable[[], int]], count: int, rounds: int) -> dict[str, float]:
    times: dict[str, list[float]] = {label: [] for label in reads}
    for _ in range(rounds):
        for label, read in reads.items():
            gc.collect()
            t = time.perf_counter()
            n = read()
            times[label].append(time.perf_counter() - t)
            assert n == count, (label, n)
    for label, took in times.items():
        best, median = min(took), statistics.median(took)
        print(f"  {label:<46}: best {best * 1e3:6,.0f} ms = {count / best:>9,.0f} messages/s,"
              f" median {median * 1e3:6,.0f} ms = {count / median:>9,.0f} messages/s")
    return {label: min(took) for label, took in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--small", action="store_true", help=HELP)
    args = parser.parse_args()
    if args.small:
        args.messages, args.rounds = 2_000, 1
    count = args.messages
    print(f"# bench_timeline — python {sys.version.split()[0]}; a {count:,}-message session, "
          "3 parts per message (step start, ~270 characters of text, step finish)\n")
    with tempfile.TemporaryDirectory(prefix="forge-bench-") as folder:
        store = DuckDBStore(Path(folder) / "timeline.duckdb")
        session = store.create_session(SessionInfo(name="long"))
        with store.hold():
            for first in range(0, count, 2000):
                store.write(_session_ops(session.id, first, min(count, first + 2000)))
        sample = store.timeline(session.id, limit=1).items[0]
        history = frames.history(store, session.id)
        assert len(history) == count and history["text"].notna().all()

        def columns() -> int:
            messages = frames.messages(store, session.id)
            parts = frames.parts(store, session.id)
            assert len(parts) == 3 * count
            return len(messages)

        print(f"load average before: {_load()}")
        best = compare({
            "as objects: store.read_timeline": lambda: len(store.read_timeline(session.id)),
            "objects' floor: built, no SQL, no JSON": objects_floor(sample, count),
            "as columns: forge.history(session)": lambda: len(frames.history(store, session.id)),
            "as columns: forge.messages() + forge.parts()": columns,
        }, count, args.rounds)
        print(f"load average after: {_load()}\n")
        target = count / 100_000
        for label, took in best.items():
            verdict = "meets" if took <= target else "misses"
            print(f"  {label:<46}: {count / took:>9,.0f} messages/s — {verdict} 100,000/s")
        store.close()


if __name__ == "__main__":
    main()
