"""Store figures, measured side by side in one run (prints; not a test).

Writes: parts/s persisted through ``DuckDBStore.write`` by one process and by four processes
sharing one file, in batches of 20 and of 200, next to the same workload on stdlib sqlite3
in WAL mode (synchronous=FULL, so a commit is as durable as DuckDB's; same validation through
``plan_write``; one long-lived connection per process, which is how SQLite is used).

Reads: the whole timeline of a 50,000-message session (3 parts each) as ``Session.messages()``
reads it (``store.read_timeline``: one page, the message rows' typed columns built into models
without a second validation, the parts' JSON validated by pydantic a page per call —
store/trusted.py), beside the two ways it was read before: DuckDB writing each message as JSON
for pydantic to validate, in pages of 5,000 (``rows.message_json``, kept as the store's path for
rows it does not trust), and a Message built per row with ``part_from_json`` per part. Each is
run ``--rounds`` times, alternated (the machine is shared): best and median, and the load. The
same for the memory backend (``model_copy`` per message before); ``iter_timeline`` pages, with
and without ``store.hold()``; one page of 100.

    python benchmarks/bench_store.py [--messages 50000] [--rounds 5] [--reads-only]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _small import HELP  # noqa: E402 — benchmarks/ is the script's folder

from forge_jupyter.message import (
    ErrorInfo,
    Message,
    SessionInfo,
    StepFinishPart,
    StepStartPart,
    TextPart,
    Tokens,
    now,
    part_from_json,
)
from forge_jupyter.store.base import collector_paused
from forge_jupyter.store.duckdb.store import DuckDBStore
from forge_jupyter.store.inmemory.store import MemoryStore
from forge_jupyter.store.ops import AppendMessage, PutMessage, PutPart
from forge_jupyter.store.plan import MessageState, PartState, SessionState, WriteState, plan_write
from forge_jupyter.store.sql import reads as duckdb_reads

TEXT = "The quick brown fox jumps over the lazy dog. " * 6  # ~270 characters, a short paragraph


# ------------------------------------------------------------------------------ write workers


def _parts(message: Message, start: int, count: int) -> list[PutPart]:
    return [
        PutPart(TextPart(session_id=message.session_id, message_id=message.id,
                         text=f"{i} {TEXT}", time_start=now(), time_end=now()))
        for i in range(start, start + count)
    ]


def duckdb_worker(path: str, n: int, batch: int, start_at: float) -> dict:
    store = DuckDBStore(path, lock_timeout=120)
    session = store.create_session(SessionInfo())
    message = Message(session_id=session.id, role="assistant")
    store.write([PutMessage(message), AppendMessage(session.id, message.id)])
    batches = [_parts(message, i, min(batch, n - i)) for i in range(0, n, batch)]
    time.sleep(max(0.0, start_at - time.time()))
    return _timed(store.write, batches)


_SQLITE_SCHEMA = """
CREATE TABLE IF NOT EXISTS session (tenant_id TEXT, id TEXT PRIMARY KEY, updated_at REAL);
CREATE TABLE IF NOT EXISTS message (tenant_id TEXT, id TEXT PRIMARY KEY, session_id TEXT,
    role TEXT, status TEXT);
CREATE TABLE IF NOT EXISTS part (tenant_id TEXT, id TEXT PRIMARY KEY, session_id TEXT,
    message_id TEXT, type TEXT, time_start REAL, time_end REAL, created_at REAL, data TEXT);
CREATE INDEX IF NOT EXISTS part_message ON part (message_id);
"""


def sqlite_worker(path: str, n: int, batch: int, start_at: float) -> dict:
    con = sqlite3.connect(path, timeout=120, isolation_level=None)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=FULL")
    con.executescript(_SQLITE_SCHEMA)
    con.execute("BEGIN IMMEDIATE")
    session = SessionInfo()
    message = Message(session_id=session.id, role="assistant")
    con.execute("INSERT INTO session VALUES ('default', ?, ?)", [session.id, now()])
    con.execute("INSERT INTO message VALUES ('default', ?, ?, 'assistant', 'running')",
                [message.id, session.id])
    con.execute("COMMIT")

    def write(ops: list[PutPart]) -> None:
        con.execute("BEGIN IMMEDIATE")
        try:
            ids = [op.part.id for op in ops]
            state = WriteState(sessions={session.id: SessionState(deleted=False)})
            state.messages[message.id] = MessageState("default", session.id, "assistant",
                                                      "running", False)
            marks = ",".join("?" * len(ids))
            for pid, mid in con.execute(f"SELECT id, message_id FROM part WHERE id IN ({marks})", ids):
                state.parts[pid] = PartState("default", session.id, mid, False)
            plan = plan_write("default", ops, state)
            con.executemany(
                "INSERT OR REPLACE INTO part VALUES ('default', ?, ?, ?, ?, ?, ?, ?, ?)",
                [(p.id, p.session_id, p.message_id, p.type, p.time_start, p.time_end,
                  p.created_at, p.model_dump_json()) for p in plan.parts.values()],
            )
            con.execute("UPDATE session SET updated_at = ? WHERE id = ?", [now(), session.id])
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise

    batches = [_parts(message, i, min(batch, n - i)) for i in range(0, n, batch)]
    time.sleep(max(0.0, start_at - time.time()))
    return _timed(write, batches)


def _timed(write, batches: list) -> dict:
    waits = []
    start = time.time()
    for ops in batches:
        t = time.perf_counter()
        write(ops)
        waits.append(time.perf_counter() - t)
    return {"start": start, "end": time.time(), "parts": sum(map(len, batches)),
            "median_ms": statistics.median(waits) * 1e3, "max_ms": max(waits) * 1e3}


def run_writers(kind: str, path: Path, procs: int, n: int, batch: int) -> dict:
    start_at = time.time() + 1.5 + 0.3 * procs  # after every process has imported and set up
    workers = [
        subprocess.Popen([sys.executable, __file__, "--worker", kind, str(path), str(n),
                          str(batch), str(start_at)], stdout=subprocess.PIPE, text=True)
        for _ in range(procs)
    ]
    reports = []
    for w in workers:
        out, _ = w.communicate()
        if w.returncode:
            raise SystemExit(f"a {kind} writer failed")
        reports.append(json.loads(out))
    wall = max(r["end"] for r in reports) - min(r["start"] for r in reports)
    return {"rate": sum(r["parts"] for r in reports) / wall, "wall": wall,
            "median_ms": statistics.median(r["median_ms"] for r in reports),
            "max_ms": max(r["max_ms"] for r in reports)}


def bench_writes(folder: Path) -> None:
    print("\n## Group commit: parts/s persisted (one transaction per batch)\n")
    print(f"{'workload':<26}{'DuckDB':>12}{'sqlite WAL':>12}{'DuckDB/sqlite':>15}"
          f"{'DuckDB batch median/max ms':>30}")
    for batch, n in ((20, 1000), (200, 4000)):
        for procs in (1, 4):
            figures = {}
            for kind in ("duckdb", "sqlite"):
                path = folder / f"w-{kind}-{batch}-{procs}.{'duckdb' if kind == 'duckdb' else 'sqlite'}"
                if kind == "duckdb":
                    DuckDBStore(path)  # the schema, before the race
                figures[kind] = run_writers(kind, path, procs, n, batch)
            d, s = figures["duckdb"], figures["sqlite"]
            label = f"{procs} proc x {n} parts, b={batch}"
            print(f"{label:<26}{d['rate']:>12,.0f}{s['rate']:>12,.0f}{d['rate'] / s['rate']:>15.2f}"
                  f"{d['median_ms']:>20.1f} / {d['max_ms']:.0f}")


# ------------------------------------------------------------------------------------ reads


def _session_ops(session_id: str, first: int, stop: int) -> list:
    ops: list = []
    for i in range(first, stop):
        m = Message(session_id=session_id, role="user" if i % 2 == 0 else "assistant",
                    status="completed", completed_at=now())
        ops += [
            PutMessage(m), PutPart(StepStartPart(session_id=session_id, message_id=m.id)),
            PutPart(TextPart(session_id=session_id, message_id=m.id, text=TEXT,
                             time_start=now(), time_end=now())),
            PutPart(StepFinishPart(session_id=session_id, message_id=m.id,
                                   tokens=Tokens(input=1200, output=80), cost=0.001)),
            AppendMessage(session_id, m.id),
        ]
    return ops


def _compare(reads: dict, count: int, rounds: int) -> dict[str, float]:
    """Each read ``rounds`` times, alternated; prints best and median, returns the bests."""
    first = list(reads.values())
    expected = first[-1]()
    for read in first[:-1]:
        assert read() == expected  # the same messages, however read
    del expected
    times: dict[str, list[float]] = {label: [] for label in reads}
    for _ in range(rounds):
        for label, read in reads.items():
            times[label].append(_timed_read(read, count))
    for label, took in times.items():
        best, median = min(took), statistics.median(took)
        print(f"  {label:<34}: best {best * 1e3:6,.0f} ms = {count / best:>8,.0f} messages/s,"
              f" median {median * 1e3:6,.0f} ms = {count / median:>8,.0f} messages/s")
    return {label: min(took) for label, took in times.items()}


def bench_reads(folder: Path, count: int, rounds: int) -> None:
    print(f"\n## Reads: a {count:,}-message session, 3 parts per message\n")
    store = DuckDBStore(folder / "read.duckdb")
    session = store.create_session(SessionInfo(name="long"))
    t = time.perf_counter()
    rows = 0
    with store.hold():
        for first in range(0, count, 2000):
            ops = _session_ops(session.id, first, min(count, first + 2000))
            store.write(ops)
            rows += len(ops)
    load = time.perf_counter() - t
    print(f"bulk load (batches of 2,000 messages, held): {rows:,} rows in {load:.1f} s "
          f"= {rows / load:,.0f} rows/s")

    print(f"load average before: {_load()}")
    print(f"\nfull timeline, DuckDB ({rounds} rounds, alternated):")
    figures = _compare({
        "row by row (two versions ago)": lambda: _row_by_row(store, session.id),
        "validated JSON pages (before)": lambda: _validated_pages(store, session.id),
        "read_timeline (now)": lambda: store.read_timeline(session.id),
    }, count, rounds)
    before, after = figures["validated JSON pages (before)"], figures["read_timeline (now)"]
    print(f"  -> {before / after:.2f}x faster than before, best against best "
          "(target: 100,000 messages/s)")

    memory = MemoryStore()
    mem_session = memory.create_session(SessionInfo(name="long"))
    for first in range(0, count, 2000):
        memory.write(_session_ops(mem_session.id, first, min(count, first + 2000)))
    print(f"\nfull timeline, memory ({rounds} rounds, alternated):")
    figures = _compare({
        "model_copy per message (before)": lambda: _memory_before(memory, mem_session.id),
        "read_timeline (now)": lambda: memory.read_timeline(mem_session.id),
    }, count, rounds)
    before, after = figures["model_copy per message (before)"], figures["read_timeline (now)"]
    print(f"  -> {before / after:.2f}x faster than before, best against best")
    print(f"load average after: {_load()}\n")

    for page_size in (500, 2000):
        t = time.perf_counter()
        seen = len(list(store.iter_timeline(session.id, page_size=page_size)))
        free = time.perf_counter() - t
        t = time.perf_counter()
        with store.hold():
            held = len(list(store.iter_timeline(session.id, page_size=page_size)))
        inside = time.perf_counter() - t
        assert seen == held == count
        print(f"iter_timeline, pages of {page_size:>5,}: {free * 1e3:8,.0f} ms "
              f"(file opened per page), {inside * 1e3:8,.0f} ms inside hold()  "
              f"= {count / inside:,.0f} messages/s")

    middle = str(count // 2)

    def one_page() -> float:
        t = time.perf_counter()
        page = store.timeline(session.id, cursor=middle, limit=100)
        assert len(page.items) == 100
        return (time.perf_counter() - t) * 1e3

    free = statistics.median(one_page() for _ in range(15))
    with store.hold():
        inside = statistics.median(one_page() for _ in range(15))
    print(f"one page of 100 (with parts), mid-session: {free:.1f} ms (file opened for it), "
          f"{inside:.1f} ms inside hold()")


def _timed_read(read, count: int) -> float:
    gc.collect()
    t = time.perf_counter()
    messages = read()
    took = time.perf_counter() - t
    assert len(messages) == count
    return took


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg()) + f" ({os.cpu_count()} cores)"


def _validated_pages(store: DuckDBStore, session_id: str, page_size: int = 5000) -> list[Message]:
    """The read before this one: pages of 5,000, each message written as JSON by DuckDB and
    validated by pydantic, the store held and the collector paused."""
    out: list[Message] = []
    with store.hold(), collector_paused():
        for start in range(0, store.timeline_length(session_id), page_size):
            with store.reading() as con:
                ids = [r[0] for r in con.execute(
                    "SELECT message_id FROM session_message WHERE tenant_id = ? "
                    "AND session_id = ? AND pos >= ? AND pos < ? ORDER BY pos",
                    [store.tenant_id, session_id, start, start + page_size]).fetchall()]
                out += duckdb_reads._validated_messages(con, store.tenant_id, ids,
                                                        sorted(set(ids)), parts=True)
    return out


def _memory_before(store: MemoryStore, session_id: str, page_size: int = 5000) -> list[Message]:
    """The memory store's read before: pydantic's ``model_copy`` per message, pages of 5,000."""
    db, out = store.db, []
    with collector_paused():
        pointers = db.timeline[session_id]
        for start in range(0, len(pointers), page_size):
            for mid in pointers[start:start + page_size]:
                parts = [db.parts[i][1] for i in db.parts_by_message.get(mid, [])]
                out.append(db.messages[mid][1].model_copy(update={"parts": parts}))
    return out


# The way a timeline was read before (the baseline of the figures above): each page's
# pointers, its message rows by id, one Message built per row, ``part_from_json`` per part.
_BEFORE_MESSAGE = (
    "t.id, t.session_id, t.role, t.parent_id, t.agent, t.model, t.provider, t.status, t.finish, "
    "t.summary, t.error_type, t.error_message, t.tokens_input, t.tokens_output, "
    "t.tokens_reasoning, t.tokens_cache_read, t.tokens_cache_write, t.tokens_estimated, t.cost, "
    "epoch_us(t.created_at), epoch_us(t.completed_at), t.origin, t.metadata"
)


def _row_by_row(store: DuckDBStore, session_id: str, page_size: int = 500) -> list[Message]:
    out: list[Message] = []
    tenant = store.tenant_id
    start = 0
    while True:
        with store.reading() as con:
            ids = [r[0] for r in con.execute(
                "SELECT message_id FROM session_message WHERE tenant_id = ? AND session_id = ? "
                "AND pos >= ? AND pos < ? ORDER BY pos",
                [tenant, session_id, start, start + page_size]).fetchall()]
            if not ids:
                return out
            found = {r[0]: r for r in con.execute(
                f"SELECT {_BEFORE_MESSAGE} FROM message t WHERE t.rowid IN (SELECT rowid FROM "
                "message WHERE tenant_id = ? AND id IN (SELECT unnest(?::VARCHAR[])))",
                [tenant, ids]).fetchall()}
            parts: dict[str, list] = {i: [] for i in ids}
            for message_id, data in con.execute(
                    "SELECT t.message_id, t.data FROM part t WHERE t.rowid IN (SELECT rowid FROM "
                    "part WHERE tenant_id = ? AND message_id IN (SELECT unnest(?::VARCHAR[]))) "
                    "ORDER BY t.message_id, t.id", [tenant, ids]).fetchall():
                parts[message_id].append(part_from_json(data))
        for i in ids:
            (id_, sid, role, parent_id, agent, model, provider, status, finish, summary,
             error_type, error_message, t_in, t_out, t_reason, t_cr, t_cw, t_est, cost,
             created_us, completed_us, origin, metadata) = found[i]
            out.append(Message(
                id=id_, session_id=sid, role=role, parent_id=parent_id, agent=agent,
                model=model, provider=provider, status=status, finish=finish, summary=summary,
                error=None if error_type is None else ErrorInfo(type=error_type,
                                                                message=error_message),
                tokens=Tokens(input=t_in, output=t_out, reasoning=t_reason, cache_read=t_cr,
                              cache_write=t_cw, estimated=t_est),
                cost=cost, created_at=created_us / 1e6,
                completed_at=None if completed_us is None else completed_us / 1e6,
                origin=None if origin is None else json.loads(origin),
                metadata=json.loads(metadata) if metadata else {}, parts=parts[i]))
        start += page_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=5, help="runs of each read, alternated")
    parser.add_argument("--reads-only", action="store_true", help="skip the write figures")
    parser.add_argument("--worker", nargs=5, help=argparse.SUPPRESS)
    parser.add_argument("--small", action="store_true", help=HELP)
    args = parser.parse_args()
    if args.small:
        args.messages, args.rounds, args.reads_only = 2_000, 1, True
    if args.worker:
        kind, path, n, batch, start_at = args.worker
        worker = duckdb_worker if kind == "duckdb" else sqlite_worker
        print(json.dumps(worker(path, int(n), int(batch), float(start_at))))
        return
    import duckdb

    print(f"# bench_store — duckdb {duckdb.__version__}, sqlite {sqlite3.sqlite_version}, "
          f"python {sys.version.split()[0]}")
    with tempfile.TemporaryDirectory(prefix="forge-bench-") as folder:
        if not args.reads_only:
            bench_writes(Path(folder))
        bench_reads(Path(folder), args.messages, args.rounds)


if __name__ == "__main__":
    main()
