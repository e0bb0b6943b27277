"""A separate process that writes to a DuckDB store, for the multi-process tests.

    python store_worker.py parts  PATH N BATCH   # N text parts in batches; prints a JSON report
    python store_worker.py marked PATH BATCH     # marked batches until killed; a line per commit
    python store_worker.py hold   PATH SECONDS   # keep the file with store.hold()
"""

from __future__ import annotations

import json
import sys
import time

from forge_jupyter.message import Event, Message, SessionInfo, TextPart
from forge_jupyter.store.duckdb.store import DuckDBStore
from forge_jupyter.store.ops import AppendMessage, PutEvent, PutMessage, PutPart


def _running_message(store: DuckDBStore) -> Message:
    session = store.create_session(SessionInfo())
    message = Message(session_id=session.id, role="assistant")
    store.write([PutMessage(message), AppendMessage(session.id, message.id)])
    return message


def parts(path: str, n: int, batch: int) -> None:
    store = DuckDBStore(path, lock_timeout=60)
    message = _running_message(store)
    waits = []
    for start in range(0, n, batch):
        ops = [
            PutPart(TextPart(session_id=message.session_id, message_id=message.id, text=f"#{i}"))
            for i in range(start, min(n, start + batch))
        ]
        t = time.perf_counter()
        store.write(ops)
        waits.append(time.perf_counter() - t)
    waits.sort()
    print(json.dumps({"session": message.session_id, "message": message.id,
                      "median": waits[len(waits) // 2], "max": waits[-1]}))


def marked(path: str, batch: int) -> None:
    """Batch i: ``batch`` parts tagged i, and an event saying batch i holds that many."""
    store = DuckDBStore(path, lock_timeout=60)
    message = _running_message(store)
    print(json.dumps({"session": message.session_id, "message": message.id}), flush=True)
    i = 0
    while True:
        ops = [
            PutPart(TextPart(session_id=message.session_id, message_id=message.id,
                             text="x" * 200, metadata={"batch": i}))
            for _ in range(batch)
        ]
        ops.append(PutEvent(Event(session_id=message.session_id, type="marker",
                                  data={"batch": i, "count": batch})))
        store.write(ops)
        print(i, flush=True)
        i += 1


def hold(path: str, seconds: float) -> None:
    store = DuckDBStore(path)
    with store.hold():
        print("held", flush=True)
        time.sleep(seconds)


if __name__ == "__main__":
    command, path, *args = sys.argv[1:]
    if command == "parts":
        parts(path, int(args[0]), int(args[1]))
    elif command == "marked":
        marked(path, int(args[0]))
    elif command == "hold":
        hold(path, float(args[0]))
    else:
        raise SystemExit(f"unknown command {command!r}")
