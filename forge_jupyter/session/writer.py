"""The one write entry: ``update_message``, ``update_part``, ``part_delta`` (DESIGN §1–§2).

A full-row update emits a sync event: the row goes to the projection (which commits it at the
next flush) and to the bus (live subscribers). A delta goes to the bus only — streamed text is
never written fragment by fragment. The writer also refuses late writes to a finished message
or part before they reach any store, and keeps the session's messages in memory for the run
that owns it (the runner lease makes it the only writer), so each model step reads its view
without a database round trip. A run fences its rows with its lease (``hold_lease``): once
another runner takes the session over, nothing more of the run is written and ``flush`` says so
(``LeaseLost``).

It is also where text is made safe (DESIGN §5): every full row — message, part, event — is
scrubbed of secrets and made valid Unicode before it reaches the store, the mirror (the
model's next view) or the bus; a text part still streaming is stored only up to where no
secret can be cut in half. Deltas are scrubbed as a stream: what could still be the start of a
secret (the unfinished word, or the rest of a line that opened ``password: "…``) is held back
until it is whole, and the part's full row replaces what the deltas showed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..bus import Bus, EventRecorded, MessageUpdated, PartDelta, PartUpdated
from ..errors import Immutable, LeaseLost
from ..message import Event, Message, Part, ReasoningPart, TextPart
from ..scrub import Scrubber, StreamScrubber
from ..store.projection import Projection
from . import runner

# Fields that hold ids and states, never text from outside: not scrubbed.
_STRUCTURAL = frozenset({"id", "session_id", "message_id", "parent_id", "type", "role", "status",
                         "state", "call_id", "parts", "created_at", "completed_at"})


class Writer:
    def __init__(self, projection: Projection, bus: Bus, scrubber: Scrubber | None = None) -> None:
        self.projection = projection
        self.bus = bus
        self.scrubber = scrubber or Scrubber.from_environment()
        self._live: dict[str, StreamScrubber] = {}  # per streaming part: deltas, scrubbed
        self._messages: dict[str, Message] = {}  # the in-memory mirror, by id
        self._terminal: set[str] = set()
        self._lease: tuple[str, str] | None = None  # (session, owner) fencing this run's rows

    # -- the lease that fences this run's rows ------------------------------------------------

    def hold_lease(self, session_id: str, owner: str,
                   on_lost: Callable[[LeaseLost], None] | None = None) -> None:
        """From now on this run's rows of ``session_id`` are written only while ``owner``
        holds its runner lease (checked in each flush's transaction); ``on_lost`` is told
        once, from the thread that flushed, when it no longer does."""
        self._lease = (session_id, owner)
        self.projection.fence(session_id, owner, on_lost)

    def let_go(self) -> None:
        """The run is over (after its last flush): its rows need no fence any more."""
        if self._lease is not None:
            self.projection.unfence(*self._lease)

    def lose(self, holder: str | None) -> None:
        """The lease went to ``holder`` (the heartbeat found out): write nothing more."""
        if self._lease is not None:
            sid, owner = self._lease
            self.projection.lose(sid, owner, LeaseLost(runner.lost_message(sid, holder),
                                                       (sid,), {sid: holder}))

    @property
    def lost(self) -> LeaseLost | None:
        """Why this run's rows are no longer written (another runner took the session over),
        said for the person; None while the run holds its lease."""
        if self._lease is None:
            return None
        sid, owner = self._lease
        error = self.projection.fences.lost(sid, owner)
        if error is None:
            return None
        holder = error.holders.get(sid)
        return LeaseLost(runner.lost_message(sid, holder), (sid,), {sid: holder})

    # -- the mirror -------------------------------------------------------------------------

    def adopt(self, messages: list[Message]) -> None:
        """Mirror messages read from the store (the start of a run)."""
        for m in messages:
            self._messages[m.id] = m
            if m.is_terminal:
                self._terminal.add(m.id)

    def message(self, message_id: str) -> Message | None:
        return self._messages.get(message_id)

    # -- the write entry --------------------------------------------------------------------

    def update_message(self, message: Message) -> Message:
        """Write a message's full row. A new message may carry its parts (written with it)."""
        if message.id in self._terminal:
            raise Immutable(
                f"message {message.id} already finished; a finished message never changes"
            )
        known = self._messages.get(message.id)
        parts = [self.clean(p) for p in message.parts] if known is None else list(known.parts)
        row = self.clean(message.row())
        self.projection.put_message(row)
        for p in parts if known is None else ():
            self.projection.put_part(p)
        mirrored = row.model_copy(update={"parts": parts})
        self._messages[message.id] = mirrored
        if message.is_terminal:
            self._terminal.add(message.id)
        self.bus.publish(MessageUpdated(mirrored))
        return mirrored

    def append(self, session_id: str, message_id: str) -> None:
        """Add a pointer to the session's timeline."""
        self.projection.append(session_id, message_id)

    def update_part(self, part: Part) -> Part:
        """Write a part's full row (a snapshot: later mutation of ``part`` changes nothing)."""
        if part.message_id in self._terminal:
            raise Immutable(
                f"message {part.message_id} already finished; its parts never change"
            )
        snapshot = part.model_copy(deep=True)  # nested dicts too: metadata, input
        snapshot = self.clean(snapshot)
        if snapshot.is_terminal:
            self._live.pop(part.id, None)
        owner = self._messages.get(part.message_id)
        index = None
        if owner is not None:
            for i, existing in enumerate(owner.parts):
                if existing.id == part.id:
                    if existing.is_terminal:
                        raise Immutable(f"part {part.id} already finished; it never changes")
                    index = i
                    break
        self.projection.put_part(snapshot)
        if owner is not None:
            if index is None:
                owner.parts.append(snapshot)
            else:
                owner.parts[index] = snapshot
        self.bus.publish(PartUpdated(snapshot))
        return snapshot

    def part_delta(self, part: Part, field: str, delta: str) -> None:
        """Broadcast a streamed fragment, scrubbed (what may still become a secret waits for
        the next one). Never stored: the full row lands at the block's end."""
        bus = self.bus
        if bus.wants(PartDelta):
            live = self._live.get(part.id)
            if live is None:
                live = self._live[part.id] = self.scrubber.stream()
            shown = live.feed(delta)
            if shown:
                bus.publish(PartDelta(part.session_id, part.message_id, part.id, field, shown))

    def record(self, event: Event) -> Event:
        """Append an event row (compaction, fork, permission, abort, …)."""
        event = self.clean(event)
        self.projection.put_event(event)
        self.bus.publish(EventRecorded(event))
        return event

    def clean(self, row: Any) -> Any:
        """``row`` (a message, part or event) scrubbed and valid; the same object if it was."""
        scrubber = self.scrubber
        streamed = isinstance(row, TextPart | ReasoningPart)
        if streamed and not row.is_terminal and row.text:
            row = row.model_copy(update={"text": scrubber.safe_prefix(row.text)})
        clean = scrubber.row(row, _STRUCTURAL)
        if streamed and clean is not row and clean.text != row.text and "signature" in clean.metadata:
            # A provider's signature covers the reasoning as it was written; scrubbed, the
            # block can no longer be sent back as signed, so it is not (llm.to_model_messages).
            clean.metadata = {k: v for k, v in clean.metadata.items() if k != "signature"}
        return clean

    def flush(self) -> int:
        """Commit what is buffered (every session's, one batch); ``LeaseLost`` if this run's
        lease went to another runner — its rows were dropped, the others written."""
        written = self.projection.flush()
        lost = self.lost
        if lost is not None:
            raise lost
        return written
