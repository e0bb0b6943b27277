"""The projection: full rows from the write entry, committed to the store in groups.

``update_message``/``update_part`` hand their rows here; nothing reaches the database until
``flush()``, which writes everything buffered as ONE batch (one transaction). Rows are
coalesced by id — a tool part that went pending → running → completed between two flushes is
written once, in its latest state — so a streamed turn costs about one row per part and per
message, whatever the number of deltas. The session core flushes before every model request
and at the end of a turn: every full row is durable before the next request is sent.
"""

from __future__ import annotations

import threading
from typing import Any

from ..model import Event, Message, Part
from .base import AppendMessage, Op, PutEvent, PutMessage, PutPart, Store


class Projection:
    def __init__(self, store: Store) -> None:
        self.store = store
        self._buffer: dict[tuple[Any, ...], Op] = {}
        self._lock = threading.Lock()
        self._flush_lock = threading.Lock()
        self.rows_written = 0  # for write-amplification figures
        self.batches_written = 0

    def put_message(self, message: Message) -> None:
        with self._lock:
            self._buffer[("m", message.id)] = PutMessage(message)

    def put_part(self, part: Part) -> None:
        with self._lock:
            self._buffer[("p", part.id)] = PutPart(part)

    def append(self, session_id: str, message_id: str) -> None:
        with self._lock:
            self._buffer[("a", session_id, message_id)] = AppendMessage(session_id, message_id)

    def put_event(self, event: Event) -> None:
        with self._lock:
            self._buffer[("e", event.id)] = PutEvent(event)

    @property
    def pending(self) -> int:
        return len(self._buffer)

    def flush(self) -> int:
        """Commit what is buffered as one batch; returns the number of rows written.

        On failure the rows go back in front of anything buffered since, so nothing is lost
        and the next flush retries them; the error is raised to the caller.
        """
        with self._flush_lock:
            with self._lock:
                if not self._buffer:
                    return 0
                batch, self._buffer = self._buffer, {}
            try:
                self.store.write(list(batch.values()))
            except BaseException:
                with self._lock:
                    newer, self._buffer = self._buffer, batch
                    self._buffer.update(newer)
                raise
            self.rows_written += len(batch)
            self.batches_written += 1
            return len(batch)
