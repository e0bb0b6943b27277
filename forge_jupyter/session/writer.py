"""The one write entry: ``update_message``, ``update_part``, ``part_delta`` (DESIGN §1–§2).

A full-row update emits a sync event: the row goes to the projection (which commits it at the
next flush) and to the bus (live subscribers). A delta goes to the bus only — streamed text is
never written fragment by fragment. The writer also refuses late writes to a finished message
or part before they reach any store, and keeps the session's messages in memory for the run
that owns it (the runner lease makes it the only writer), so each model step reads its view
without a database round trip.
"""

from __future__ import annotations

from ..bus import Bus, EventRecorded, MessageUpdated, PartDelta, PartUpdated
from ..errors import Immutable
from ..model import Event, Message, Part
from ..store.projection import Projection


class Writer:
    def __init__(self, projection: Projection, bus: Bus) -> None:
        self.projection = projection
        self.bus = bus
        self._messages: dict[str, Message] = {}  # the in-memory mirror, by id
        self._terminal: set[str] = set()

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
        parts = list(message.parts) if known is None else list(known.parts)
        row = message.row()
        self.projection.put_message(row)
        for p in message.parts if known is None else ():
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
        """Broadcast a streamed fragment. Never stored: the full row lands at the block's end."""
        bus = self.bus
        if bus.has_subscribers:
            bus.publish(PartDelta(part.session_id, part.message_id, part.id, field, delta))

    def record(self, event: Event) -> Event:
        """Append an event row (compaction, fork, permission, abort, …)."""
        self.projection.put_event(event)
        self.bus.publish(EventRecorded(event))
        return event

    def flush(self) -> int:
        return self.projection.flush()
