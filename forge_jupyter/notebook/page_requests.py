"""Requests the kernel sends to the attached pages, each waiting for the first answer.

``read-cells`` (notebook_read) and ``edit-cell`` (the cell tools) ask every attached page and
take whichever answers first — a page left open elsewhere may be gone. A tool that gave up
waiting forgets its request, so a late answer is dropped; an answer for an id never asked is
ignored (a page cannot answer for another's request it did not see).
"""

from __future__ import annotations

import secrets
import threading
from concurrent.futures import Future
from typing import Generic, TypeVar

T = TypeVar("T")


class PageRequests(Generic[T]):
    def __init__(self, prefix: str) -> None:
        self.prefix = prefix  # of the request ids: cells_…, edit_…
        self._waiting: dict[str, Future[T]] = {}
        self._lock = threading.Lock()

    def open(self) -> tuple[str, Future[T]]:
        request_id = f"{self.prefix}_{secrets.token_hex(8)}"
        future: Future[T] = Future()
        with self._lock:
            self._waiting[request_id] = future
        return request_id, future

    def forget(self, future: Future[T]) -> None:
        """A request no page answered in time: a late answer is dropped."""
        with self._lock:
            for key in [k for k, v in self._waiting.items() if v is future]:
                self._waiting.pop(key, None)

    def answer(self, request_id: str, value: T) -> None:
        """From the comm's thread: the tool waiting on it goes on."""
        with self._lock:
            future = self._waiting.pop(request_id, None)
        if future is not None and not future.done():
            future.set_result(value)

    def answer_all(self, value: T) -> None:
        """Every request still waiting gets ``value`` (the last page closed)."""
        with self._lock:
            waiting, self._waiting = self._waiting, {}
        for future in waiting.values():
            if not future.done():
                future.set_result(value)
