"""Long-term memory: indexing and searching a folder of daily logs, measured side by side in
one run (prints; not a test).

N daily logs of about 4 KB each (a month of busy days, then some), indexed into a DuckDB file
and into the memory store (the same SQL on an in-memory DuckDB): the first full index, a sync
where nothing changed (one stat per file), a sync after one file was edited (only it is read
again), and a keyword (BM25 in SQL) search; then the same with vectors from the fake model
server's /embeddings, through litellm over HTTP (the HTTP round trips dominate there).

    python benchmarks/bench_memory.py [--files 200] [--searches 30]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from _small import HELP  # noqa: E402 — benchmarks/ is the script's folder

from forge_jupyter.memory import LongTermMemory  # noqa: E402
from forge_jupyter.store.duckdb.store import DuckDBStore  # noqa: E402
from forge_jupyter.store.inmemory.store import MemoryStore  # noqa: E402
from forge_jupyter.testing import FakeModelServer  # noqa: E402

WORDS = ("revenue churn region cohort retention forecast warehouse query join median window "
         "customer invoice segment campaign dashboard model drift anomaly latency quarter "
         "budget pipeline schema partition index vector weekly monthly target baseline").split()


def make_logs(folder: Path, files: int) -> None:
    rng = random.Random(7)
    start = dt.date(2026, 1, 1)
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(files):
        lines = [f"# Memory log {start + dt.timedelta(days=i)}", ""]
        for entry in range(6):
            lines += [f"## {9 + entry}:00 · session s{i} · compacted", "",
                      f"### [research][tool:sql] SELECT {' '.join(rng.sample(WORDS, 4))}", "",
                      "```", " ".join(rng.choices(WORDS, k=60)), "```", "",
                      "### Decided", "", " ".join(rng.choices(WORDS, k=40)), ""]
        (folder / f"{start + dt.timedelta(days=i)}.md").write_text("\n".join(lines))


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def run(store, folder: Path, searches: int, **kw) -> dict[str, float]:
    memory = LongTermMemory(store, folder, **kw)
    out = {"full index": timed(memory.sync), "sync, nothing changed": timed(memory.sync)}
    edited = sorted(folder.glob("*.md"))[len(list(folder.glob("*.md"))) // 2]
    edited.write_text(edited.read_text() + "\nA new finding about churn.\n")
    out["sync, one file edited"] = timed(memory.sync)
    assert memory.last_sync is not None and len(memory.last_sync.indexed) == 1
    queries = [" ".join(random.Random(i).sample(WORDS, 3)) for i in range(searches)]
    times = [timed(lambda q=q: memory.search(q, k=5)) for q in queries]
    out["search (median)"] = statistics.median(times)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--searches", type=int, default=30)
    parser.add_argument("--small", action="store_true", help=HELP)
    args = parser.parse_args()
    if args.small:
        args.files, args.searches = 5, 2
    from forge_jupyter.llm.loading import litellm

    print(f"importing litellm first (not counted below): {timed(litellm):.1f} s")
    with tempfile.TemporaryDirectory() as tmp, FakeModelServer() as server:
        root = Path(tmp)
        results: dict[str, dict[str, float]] = {}
        for name, kw in (("keyword", {"embedding_model": "none"}),
                         ("hybrid", {"embedding_model": "openai/fake-embedding",
                                     "litellm_kwargs": {"api_base": server.openai_base,
                                                        "api_key": "sk-fake"}})):
            for backend in ("duckdb", "memory"):
                folder = root / f"{name}-{backend}"
                make_logs(folder, args.files)
                store = (DuckDBStore(root / f"{name}.duckdb") if backend == "duckdb"
                         else MemoryStore())
                results[f"{name}/{backend}"] = run(store, folder, args.searches, **kw)
                store.close()
        size = sum(p.stat().st_size for p in (root / "keyword-duckdb").glob("*.md"))
        print(f"{args.files} daily logs, {size / 1e6:.1f} MB; seconds (ratio to keyword/duckdb)")
        columns = list(results)
        print(f"{'':24}" + "".join(f"{c:>22}" for c in columns))
        for row in results[columns[0]]:
            base = results["keyword/duckdb"][row]
            print(f"{row:24}" + "".join(
                f"{results[c][row]:>13.4f} ({results[c][row] / base:4.1f}×)" for c in columns))


if __name__ == "__main__":
    main()
