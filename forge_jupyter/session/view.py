"""The model's view of a session: filterCompacted over the timeline (the seed's rule).

Scan newest → oldest; an assistant summary that succeeded marks its parent user message;
reaching that user message (it carries a compaction part) ends the scan, and the result is
reversed to oldest → newest. Where the compaction part names a ``tail_start``, the scan goes
on back to that message, so the turns kept verbatim stay in view.

The timeline is read backwards page by page (pages that grow), so building the view costs the
visible window, not the whole history.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import NotFound
from ..message import CompactionPart, Message, TextPart
from ..store.base import Store, encode_cursor


def is_summary(message: Message) -> bool:
    """A compaction summary that succeeded: the only kind of message that is a boundary."""
    return (
        message.role == "assistant"
        and message.summary
        and message.status == "completed"
        and message.finish is not None
        and message.error is None
    )


def is_person_turn(message: Message) -> bool:
    """A user message a person wrote: not one the harness wrote (synthetic text only), not a
    compaction request (no text). Tail retention and prune count turns by it."""
    if message.role != "user":
        return False
    texts = [p for p in message.parts if isinstance(p, TextPart)]
    return bool(texts) and not all(p.synthetic for p in texts)


def compaction_part(message: Message) -> CompactionPart | None:
    for p in message.parts:
        if isinstance(p, CompactionPart):
            return p
    return None


class _Filter:
    """filterCompacted as a consumer of messages newest → oldest."""

    def __init__(self) -> None:
        self.result: list[Message] = []
        self.completed: set[str] = set()
        self.tail_start: str | None = None
        self.done = False

    def feed(self, message: Message) -> bool:
        """Take the next older message; False once the view is complete."""
        if self.done:
            return False
        self.result.append(message)
        if self.tail_start is not None:
            if message.id == self.tail_start:
                self.done = True
            return not self.done
        if message.role == "user" and message.id in self.completed:
            part = compaction_part(message)
            if part is not None:
                if part.tail_start and part.tail_start != message.id:
                    self.tail_start = part.tail_start
                    return True
                self.done = True
                return False
        if is_summary(message) and message.parent_id:
            self.completed.add(message.parent_id)
        return True


def filter_compacted(newest_first: Iterable[Message]) -> list[Message]:
    """The seed's filterCompacted: messages newest → oldest in, the model's view out."""
    f = _Filter()
    for m in newest_first:
        if not f.feed(m):
            break
    f.result.reverse()
    return f.result


def load_view(store: Store, session_id: str, *, page_size: int = 200,
              max_page: int = 3_200) -> tuple[list[Message], int]:
    """(the model's view, the timeline position where it starts), reading backwards.

    Pages start at ``page_size`` messages and double up to ``max_page``: a short view costs
    one small read, a long one a few reads, and at most about as much again is over-read.
    """
    f = _Filter()
    with store.hold():  # DuckDB: one open of the file for all the pages
        total = end = store.timeline_length(session_id)
        size = page_size
        while end > 0 and not f.done:
            start = max(0, end - size)
            page = store.timeline(session_id, cursor=encode_cursor(start), limit=end - start)
            for m in reversed(page.items):
                if not f.feed(m):
                    break
            end = start
            size = min(size * 2, max(max_page, page_size))
    f.result.reverse()
    return f.result, total - len(f.result)


def load_turn(store: Store, session_id: str, user_message_id: str | None = None,
              *, page_size: int = 50) -> list[Message]:
    """A turn as stored, with parts: from the person's message that began it (the one given,
    by default the latest) to the end of the timeline — read from there on, so it costs the
    turn, not the history. A compaction mid-turn writes user messages of its own (the request,
    the continuation the answer replies to); the turn still begins at the person's message."""
    with store.hold():
        total = store.timeline_length(session_id)
        end = total
        if user_message_id is not None:
            try:
                end = store.position(session_id, user_message_id) + 1
            except NotFound:
                pass
        start = _turn_start(store, session_id, end, page_size)
        if start >= total:
            return []
        return store.timeline(session_id, cursor=encode_cursor(start), limit=total - start).items


def _turn_start(store: Store, session_id: str, end: int, page_size: int) -> int:
    """The position of the latest message a person wrote before ``end``; else of the earliest
    user message there; else 0. Pages are read without parts; only user messages get theirs."""
    earliest: int | None = None
    while end > 0:
        first = max(0, end - page_size)
        page = store.timeline(session_id, cursor=encode_cursor(first), limit=end - first,
                              with_parts=False)
        for i in range(len(page.items) - 1, -1, -1):
            m = page.items[i]
            if m.role != "user":
                continue
            earliest = first + i
            m.parts = store.list_parts(m.id)
            if is_person_turn(m):
                return first + i
        end = first
        page_size *= 2
    return earliest or 0
