"""What one prompt's run carries through runLoop and the Processor."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..bus import Bus
from ..model import SessionInfo
from ..tools.base import Tool
from .retry import RetryPolicy
from .writer import Writer


@dataclass(frozen=True)
class RunConfig:
    step_limit: int = 25  # model rounds per prompt
    doom_loop_threshold: int = 3  # identical tool calls in a row that stop the run
    tool_timeout: float = 300.0  # seconds
    retry: RetryPolicy = field(default_factory=RetryPolicy)


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
    budget: float | None = None
    forge: Any = None
    spent: float = 0.0
    steps: int = 0
    recent_calls: list[tuple[str, str]] = field(default_factory=list)
    view_ids: list[str] = field(default_factory=list)  # the model's view, oldest first
    compactions_this_run: int = 0
    aborted: bool = False  # set by Session.abort(): a cancel that ends the run cleanly
    compaction_ratio: float = 0.8  # of the usable window
    char_budget: int = 400_000  # for models litellm does not know
    # The permission gate, awaited before each tool call: None to run, else why it may not.
    gate: Callable[..., Any] | None = None
    permissions: Any = None  # the turn's layered rules (tools.permission.Permissions)
    scrub: Callable[[str | None], str | None] = lambda text: text  # secrets out of outputs
    output_dir: str | None = None  # where full outputs of truncated tool results go
    prepare: Callable[[Any], Any] | None = None  # plugin hooks over each model request

    async def flush(self) -> None:
        """Make every buffered full row durable (one transaction) without blocking the loop."""
        if self.writer.projection.pending:
            await asyncio.to_thread(self.writer.flush)
