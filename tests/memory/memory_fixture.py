"""The memory tests' fixture files (a module of its own: test modules import it by name,
which ``conftest`` is not when several test folders run in one call)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

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
