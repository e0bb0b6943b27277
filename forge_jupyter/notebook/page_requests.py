"""Requests the kernel sends to the attached pages, each waiting for the first answer.

``read-cells`` (notebook_read) asks every attached page and takes whichever answers first — a
page left open elsewhere may be gone. ``edit-cell`` goes to one page (its owner, the page that
attached last): every page that got it would apply it, so a notebook open in two tabs, or
shared by real-time collaboration, would get each change twice. A tool that gave up
waiting forgets its request, so a late answer is dropped; an answer for an id never asked is
ignored (a page cannot answer for another's request it did not see).
"""

from __future__ import annotations

import secrets
import threading
from concurrent.futures import Future
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class PageRequests(Generic[T]):
    def __init__(self, prefix: str) -> None:
        self.prefix = prefix  # of the request ids: cells_…, edit_…
        self._waiting: dict[str, Future[T]] = {}
        self._owners: dict[str, str] = {}  # request id → the one page asked (its comm id)
        self._lock = threading.Lock()

    def open(self, owner: str | None = None) -> tuple[str, Future[T]]:
        """A new request's id and the future its answer sets; ``owner``: the one page asked."""
        request_id = f"{self.prefix}_{secrets.token_hex(8)}"
        future: Future[T] = Future()
        with self._lock:
            self._waiting[request_id] = future
            if owner is not None:
                self._owners[request_id] = owner
        return request_id, future

    def forget(self, future: Future[T]) -> str | None:
        """A request no page answered in time: a late answer is dropped. The page it was asked
        of, if one."""
        owner = None
        with self._lock:
            for key in [k for k, v in self._waiting.items() if v is future]:
                self._waiting.pop(key, None)
                owner = self._owners.pop(key, None) or owner
        return owner

    def answer(self, request_id: str, value: T) -> None:
        """From the comm's thread: the tool waiting on it goes on."""
        with self._lock:
            future = self._waiting.pop(request_id, None)
            self._owners.pop(request_id, None)
        if future is not None and not future.done():
            future.set_result(value)

    def answer_owned(self, owner: str, value: T) -> None:
        """Every request asked of ``owner`` alone gets ``value`` (that page closed)."""
        with self._lock:
            keys = [k for k, o in self._owners.items() if o == owner]
        for key in keys:
            self.answer(key, value)



def reorder(pages: dict[str, Any], comm_id: str | None, *, last: bool) -> None:
    """Move an attached page to the end of ``pages`` (``last``: it was just heard from, so
    edits go to it) or to the front (it left an edit unanswered: it may be a closed tab whose
    comm never closed, so the next edit asks another page)."""
    page = pages.pop(comm_id, None) if comm_id is not None else None
    if page is None:
        return
    if last:
        pages[comm_id] = page
    else:
        rest = dict(pages)
        pages.clear()
        pages[comm_id] = page
        pages.update(rest)
