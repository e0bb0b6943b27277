"""Long-term memory fixtures: a memory folder of known files, a store of each backend."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from forge_jupyter.memory import LongTermMemory, Weights
from forge_jupyter.store.duckdb import DuckDBStore
from forge_jupyter.store.memory import MemoryStore

TODAY = dt.date(2026, 11, 30)

FIXTURE = {
    "MEMORY.md": """\
# MEMORY.md — curated facts

## Data
The sales figures live in the warehouse table analytics.sales_daily, one row per store and day.
Customer ids are strings like C-00042; never cast them to integers.

## Preferences
The team prefers polars over pandas for joins of more than ten million rows.
Charts use the company palette: navy, teal and sand.

## People
Ana Ortiz owns the churn model and reviews every change to it.
""",
    "2026-11-12.md": """\
# Memory log 2026-11-12

## 10:02 · session sales · compacted

### [research][tool:sql] SELECT region, sum(revenue) FROM sales GROUP BY region

```
region  revenue
West    1204332
East     998120
```

### Decided

The West region had the highest revenue in Q3, about 1.2 million.
""",
    "2026-11-28.md": """\
# Memory log 2026-11-28

## 15:40 · session churn · compacted

### [research][tool:sql] SELECT avg(churned) FROM customers

```
0.042
```

### Decided

Monthly churn is 4.2 percent; the retention campaign targets customers idle for 60 days.
""",
    "notes/deploy.md": """\
# Deploying the dashboard

Run make release from the repository root; it builds the wheel and uploads it to the
internal index. The dashboard server restarts itself within five minutes.
""",
}


def write_fixture(folder: Path, files: dict[str, str] = FIXTURE) -> Path:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder


@pytest.fixture(params=["memory", "duckdb"])
def store(request, tmp_path):
    made = MemoryStore() if request.param == "memory" else DuckDBStore(tmp_path / "forge.duckdb")
    yield made
    made.close()


@pytest.fixture
def folder(tmp_path) -> Path:
    return write_fixture(tmp_path / "mem")


@pytest.fixture
def keyword_memory(store, folder) -> LongTermMemory:
    """Memory with no embedding provider (no key in the environment, none configured)."""
    return LongTermMemory(store, folder, embedding_model=None, litellm_kwargs={},
                          weights=Weights())


@pytest.fixture(autouse=True)
def no_provider_keys(monkeypatch):
    """A developer's own key must not turn a keyword-only test into a network call."""
    for name in ("OPENAI_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
