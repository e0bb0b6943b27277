"""What one prompt's run carries through runLoop, the Processor and compaction: the turn's
decisions (made once, session/turn.py) and the run's own state (steps, spend, the view)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from .. import image_files, llm
from ..bus import Bus
from ..llm.images import ImageLimits
from ..message import FilePart, Message, SessionInfo, TextPart, ToolPart, now
from ..settings import BY_NAME
from ..tools.base import Prepared, Tool
from ..tools.permission import Permissions
from .allowance import Allowance
from .host import Host
from .retry import RetryPolicy
from .writer import Writer


@dataclass(frozen=True)
class RunConfig:
    # Defaults of a run made without a Forge (a benchmark's): the declared ones (settings.py).
    step_limit: int = BY_NAME["step_limit"].default  # model rounds per prompt, subagents' included
    doom_loop_threshold: int = 3  # identical tool calls in a row that stop the run
    tool_timeout: float = BY_NAME["tool_timeout"].default  # seconds
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    lean_stream: bool = BY_NAME["lean_stream"].default  # llm/lean.py reads the stream


@dataclass
class RunContext:
    session: SessionInfo
    writer: Writer
    bus: Bus
    model: str
    agent: str
    system: str
    tools: dict[str, Tool]
    params: dict[str, Any]
    config: RunConfig
    # What the prompt may still use (steps, money, task depth): shared with its subagents.
    # (A run made without one — a benchmark's — gets a pool of its own, no budget.)
    allowance: Allowance = field(default_factory=lambda: Allowance.top(RunConfig.step_limit,
                                                                       None, None))
    host: Host | None = None  # the owner (the Forge): its services, and announce
    recent_calls: list[tuple[str, str]] = field(default_factory=list)
    view_ids: list[str] = field(default_factory=list)  # the model's view, oldest first
    compactions_this_run: int = 0
    aborted: bool = False  # set by Session.abort(): a cancel that ends the run cleanly
    compaction_ratio: float = BY_NAME["compaction_ratio"].default  # of the usable window
    char_budget: int = BY_NAME["char_budget"].default  # for models litellm does not know
    # The permission gate, awaited before each tool call: None to run, else why it may not.
    gate: Callable[[RunContext, Tool, ToolPart, Prepared | None], Awaitable[str | None]] | None = None
    permissions: Permissions | None = None  # the turn's layered rules
    scrub: Callable[[str | None], str | None] = lambda text: text  # secrets out of outputs
    output_dir: str | None = None  # where full outputs of truncated tool results go
    prepare: Callable[[Any], Any] | None = None  # plugin hooks over each model request
    display_available: bool = False  # a notebook front end shows the tools' rich outputs
    images: ImageLimits = field(default_factory=ImageLimits)  # what a vision model is sent

    def stop_words(self) -> str:
        """Why a cancelled run stopped, for the messages it leaves closed: the person's Stop,
        or (its lease fenced off) another runner that took the session over."""
        if self.writer.lost is not None:
            return "stopped: another runner took this session over"
        return "stopped by the user"

    def image_sending(self) -> llm.ImageSending:
        """How this run's requests reach the images tools showed: each kept in the outputs of
        the session that wrote its part (a fork's shared messages: the session it forked)."""

        def read(part: FilePart) -> bytes | None:
            if part.session_id == self.session.id:
                folder = self.output_dir
            else:
                folder = self.host.output_dir(part.session_id) if self.host is not None else None
            if folder is None or part.image is None:
                return None
            try:
                return image_files.load(folder, part.image.sha256, part.mime)
            except image_files.BadImageName:
                return None

        return llm.ImageSending(self.images, read)

    def view(self) -> list[Message]:
        """The model's view as this run holds it now (the writer's mirror), oldest first."""
        return [m for m in (self.writer.message(i) for i in self.view_ids) if m is not None]

    def add_message(self, message: Message) -> Message:
        """Write a new message, point the session's timeline at it, and add it to the view."""
        self.writer.update_message(message)
        self.writer.append(self.session.id, message.id)
        self.view_ids.append(message.id)
        return message

    def user_message(self, text: str | None = None, *, synthetic: bool = False,
                     **fields: Any) -> Message:
        """A finished user message of this run — the person's prompt, or one the harness writes
        (``synthetic`` text, a compaction request) — holding ``text`` if given; not written yet."""
        message = Message(session_id=self.session.id, role="user", status="completed",
                          agent=self.agent, model=self.model, completed_at=now(), **fields)
        if text is not None:
            message.parts = [TextPart(session_id=self.session.id, message_id=message.id, text=text,
                                      synthetic=synthetic, time_start=now(), time_end=now())]
        return message

    def assistant_message(self, parent_id: str, **fields: Any) -> Message:
        """An assistant message of this run answering ``parent_id``; not written yet."""
        return Message(session_id=self.session.id, role="assistant", parent_id=parent_id,
                       agent=self.agent, model=self.model, provider=llm.provider_of(self.model),
                       **fields)

    async def flush(self) -> None:
        """Make every buffered full row durable (one transaction) without blocking the loop."""
        if self.writer.projection.pending:
            await asyncio.to_thread(self.writer.flush)
