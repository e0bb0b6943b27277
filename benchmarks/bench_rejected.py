"""What a refused row costs a flush, measured side by side in one run (prints; not a test).

A turn's batch (one message finishing with N text parts, its timeline pointer and an event)
flushed through ``Projection`` into a DuckDB file: all rows good, against the same batch with
one part the store cannot serialize (found by bisection, replaced by a stand-in, reported).
The good path must not pay for the bad one: its time is printed next to the plain
``DuckDBStore.write`` of the same ops.

    python benchmarks/bench_rejected.py [--parts 40] [--rounds 15]
"""

from __future__ import annotations

import argparse
import logging
import statistics
import tempfile
import time
from pathlib import Path

from _small import HELP  # noqa: E402 — benchmarks/ is the script's folder

from forge_jupyter.message import Event, Message, SessionInfo, TextPart, now
from forge_jupyter.store.duckdb.store import DuckDBStore
from forge_jupyter.store.ops import AppendMessage, PutEvent, PutMessage, PutPart
from forge_jupyter.store.projection import Projection


class Unserializable:
    pass


def _batch(session_id: str, parts: int, bad: bool) -> list:
    m = Message(session_id=session_id, role="assistant")
    ops: list = [PutMessage(m)]
    for i in range(parts):
        meta = {"x": Unserializable()} if bad and i == parts // 2 else {}
        ops.append(PutPart(TextPart(session_id=session_id, message_id=m.id, text=f"part {i} " * 20,
                                    time_start=now(), time_end=now(), metadata=meta)))
    ops[0] = PutMessage(m.model_copy(update={"status": "completed", "completed_at": now()}))
    ops += [AppendMessage(session_id, m.id), PutEvent(Event(session_id=session_id, type="b"))]
    return ops


def _projection_flush(store: DuckDBStore, session_id: str, parts: int, bad: bool) -> float:
    projection = Projection(store)
    for op in _batch(session_id, parts, bad):
        if isinstance(op, PutMessage):
            projection.put_message(op.message)
        elif isinstance(op, PutPart):
            projection.put_part(op.part)
        elif isinstance(op, AppendMessage):
            projection.append(op.session_id, op.message_id)
        else:
            projection.put_event(op.event)
    t = time.perf_counter()
    projection.flush()
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--parts", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--small", action="store_true", help=HELP)
    args = ap.parse_args()
    if args.small:
        args.parts, args.rounds = 5, 2
    logging.getLogger("forge_jupyter.store.projection").setLevel(logging.ERROR)  # one a round
    with tempfile.TemporaryDirectory() as tmp:
        store = DuckDBStore(Path(tmp) / "bench.duckdb")
        sid = store.create_session(SessionInfo()).id
        plain, good, bad = [], [], []
        for _ in range(args.rounds):  # interleaved, so drift hits all three alike
            ops = _batch(sid, args.parts, bad=False)
            t = time.perf_counter()
            store.write(ops)
            plain.append(time.perf_counter() - t)
            good.append(_projection_flush(store, sid, args.parts, bad=False))
            bad.append(_projection_flush(store, sid, args.parts, bad=True))
    p, g, b = (statistics.median(x) * 1000 for x in (plain, good, bad))
    rows = args.parts + 3
    print(f"one batch of {rows} rows into DuckDB, median of {args.rounds} rounds:")
    print(f"  store.write, all good         {p:7.1f} ms")
    print(f"  Projection.flush, all good    {g:7.1f} ms   ({g / p:.2f}x store.write)")
    print(f"  Projection.flush, 1 refused   {b:7.1f} ms   ({b / g:.1f}x the good flush)")


if __name__ == "__main__":
    main()
