"""What a model round makes durable before it ends, without writing per delta (DESIGN §2–§3).

``Checkpoints``: while a round streams, a timer ticks once a second (from its first text or
reasoning block to the end of the stream): it writes the open block's full row (the text so
far) through the write entry and commits it, with whatever else is buffered (a block that
ended meanwhile), off the event loop — so a crash loses at most the last second. Deltas still
never write.

``SharedCommit``: a tool call's ``running`` row, arguments included, is committed before the
call runs, so a crash mid-tool leaves the call findable; calls that start together share one
commit.
"""

from __future__ import annotations

import asyncio
import logging

from ..errors import LeaseLost
from ..message import ReasoningPart, TextPart
from .writer import Writer

log = logging.getLogger(__name__)
CHECKPOINT_EVERY: float | None = 1.0  # seconds between two checkpoints of an open block


class Checkpoints:
    def __init__(self, writer: Writer) -> None:
        self.writer = writer
        self._part: TextPart | ReasoningPart | None = None
        self._buf: list[str] = []
        self._seen = 0  # len(self._buf) just after the last checkpoint
        self._timer: asyncio.TimerHandle | None = None
        self._commit: asyncio.Future | None = None

    def start(self, part: TextPart | ReasoningPart, buf: list[str]) -> None:
        """Watch ``part`` while it streams; ``buf`` holds its deltas (the caller appends)."""
        self._part, self._buf, self._seen = part, buf, 0
        if self._timer is None:  # the clock runs on across blocks: it is the last commit's age
            self._arm()

    def stop(self) -> None:
        """The block ended (its end row is the caller's, committed at the next tick)."""
        self._part = None

    async def settle(self) -> None:
        """The stream ended: no more ticks; let a commit in flight finish before anything
        else flushes (a later flush that found its rows taken would return before they land)."""
        self._part = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._commit is not None and not self._commit.done():
            await asyncio.shield(self._commit)

    def _arm(self) -> None:
        every = CHECKPOINT_EVERY
        if every is not None:
            self._timer = asyncio.get_running_loop().call_later(every, self._fire)

    def _fire(self) -> None:
        self._arm()
        if self._commit is not None and not self._commit.done():
            return  # one commit at a time: this tick's news goes with the next
        part, buf = self._part, self._buf
        if part is not None and len(buf) > self._seen:
            so_far = "".join(buf)
            buf[:] = [so_far]  # the next checkpoint joins one string, not every delta again
            self._seen = 1
            self.writer.update_part(part.model_copy(update={"text": so_far}))
        if self.writer.projection.pending:
            self._commit = asyncio.ensure_future(self._flush())

    async def _flush(self) -> None:
        try:
            await asyncio.to_thread(self.writer.flush)
        except LeaseLost:
            return  # another runner holds the session: the run was told and is stopping
        except Exception as exc:  # the rows stay buffered; the next flush retries them
            log.warning("checkpoint of streamed text not written yet: %s", exc)


class SharedCommit:
    def __init__(self, writer: Writer) -> None:
        self.writer = writer
        self._joining: asyncio.Future | None = None

    async def __call__(self) -> None:
        """Commit everything written so far; callers in the same turn of the loop share it."""
        shared = self._joining
        if shared is None:
            shared = self._joining = asyncio.ensure_future(self._commit_soon())
        await asyncio.shield(shared)

    async def _commit_soon(self) -> None:
        await asyncio.sleep(0)  # the other calls starting in this turn of the loop join first
        self._joining = None  # later callers need a commit of their own
        # Unconditional (not RunContext.flush, which skips when nothing is pending): it waits
        # for a commit in flight that may hold these rows instead of returning before they land.
        await asyncio.to_thread(self.writer.flush)
