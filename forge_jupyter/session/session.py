"""The Session handle: what the Python API, the magics and the side panel hold."""

from __future__ import annotations

import os
from typing import Any

from ..errors import NotFound
from ..imported import trusted_directory
from ..message import Message, SessionInfo
from . import runner
from .approval import Answer
from .commands import expand_command
from .host import Host
from .prompt import compact_async, prompt_async, run_sync
from .shell import ShellResult, shell_async
from .title import fork_title, title_of


def _as_trusted(forge: Host, info: SessionInfo) -> SessionInfo:
    """``info`` as this Forge runs it: a stored directory outside the Forge's root (else the
    working directory) is no root for the file tools — a row may have been written by anyone
    — so the Forge's root stands in for it (imported.trusted_directory)."""
    root = forge.root or os.getcwd()
    directory = trusted_directory(info.directory, root)
    return info if directory == info.directory else info.model_copy(update={"directory": directory})


class Session:
    def __init__(self, forge: Host, info: SessionInfo) -> None:
        self.forge = forge  # its owner: the Forge facade (session/host.py says what is used)
        self._info = _as_trusted(forge, info)

    @property
    def id(self) -> str:
        return self._info.id

    @property
    def name(self) -> str | None:
        return self._info.name

    @property
    def info(self) -> SessionInfo:
        return self._info

    def refresh(self) -> SessionInfo:
        self._info = _as_trusted(self.forge, self.forge.services.store.get_session(self.id))
        return self._info

    def __repr__(self) -> str:
        label = f" {self.name!r}" if self.name else ""
        return f"<forge Session {self.id}{label}>"

    # -- prompting -------------------------------------------------------------------------

    async def prompt_async(self, text: str, **options: Any) -> Message:
        """Answer ``text``; progress goes over the bus. Options: model, agent, tools, budget."""
        return await prompt_async(self, text, **options)

    def prompt(self, text: str, **options: Any) -> Message:
        """Answer ``text`` and return the finished assistant message (blocking)."""
        return run_sync(lambda: prompt_async(self, text, **options))

    async def command_async(self, name: str, arguments: str = "", **options: Any) -> Message:
        """Run the command ``name`` (a template in .forge/commands/NAME.md) with ``arguments``;
        its front matter's agent and model apply unless ``options`` give their own."""
        text, options = expand_command(self.forge, name, arguments, options)
        return await prompt_async(self, text, **options)

    def command(self, name: str, arguments: str = "", **options: Any) -> Message:
        """Run a command (blocking): ``session.command("review", "parse_dates")``."""
        text, options = expand_command(self.forge, name, arguments, options)
        return run_sync(lambda: prompt_async(self, text, **options))

    async def shell_async(self, command: str, *, timeout: float | None = None) -> ShellResult:
        """Run ``command`` in the session's root as the person and record it for the model."""
        return await shell_async(self, command, timeout=timeout)

    def shell(self, command: str, *, timeout: float | None = None) -> ShellResult:
        """Run a shell command in the session's root (no approval: you typed it), within
        ``timeout`` seconds (default ``Forge.shell_timeout``); the model sees it next turn."""
        return run_sync(lambda: shell_async(self, command, timeout=timeout))

    def abort(self) -> bool:
        """Stop the running prompt of this session (from any thread); False if none runs."""
        run = runner.current(id(self.forge.services.store), self.id)
        return run.abort() if run is not None else False

    @property
    def running(self) -> bool:
        return runner.current(id(self.forge.services.store), self.id) is not None

    # -- reading ---------------------------------------------------------------------------

    def messages(self) -> list[Message]:
        """Every message of the session's timeline, oldest first, with parts.

        Objects cost ~30 µs a message to build (benchmarks/bench_timeline.py); a long
        session reads ~6× faster as columns: ``forge.history(session)``."""
        self.forge.flush()
        return self.forge.services.store.read_timeline(self.id)

    @property
    def last(self) -> Message | None:
        msgs = self.messages()
        return msgs[-1] if msgs else None

    # -- shape -----------------------------------------------------------------------------

    async def compact_async(self, *, model: str | None = None) -> Message:
        """Compact the session now; returns the summary message (the new boundary)."""
        return await compact_async(self, model=model)

    def compact(self, *, model: str | None = None) -> Message:
        """Compact the session now (blocking); returns the summary message."""
        return run_sync(lambda: compact_async(self, model=model))

    def approve(self, request_id: str, answer: str = "once", reason: str | None = None,
                by: str = "user") -> None:
        """Answer one of this session's pending approvals (once | session | deny)."""
        self.forge.services.approvals.answer(request_id, Answer(answer, reason, by))

    @property
    def pending_approvals(self) -> list:
        return self.forge.services.approvals.pending(self.id)

    def answer(self, request_id: str, text: str, by: str = "user") -> None:
        """Answer one of this session's pending questions (the ``question`` tool's)."""
        if not any(q.id == request_id for q in self.pending_questions):
            raise NotFound(f"no pending question {request_id!r} in session {self.id} "
                           "(already answered, its run ended, or another session's)")
        self.forge.services.questions.answer(request_id, text, by)

    @property
    def pending_questions(self) -> list:
        return self.forge.services.questions.pending(self.id)

    def fork(self, at: str | None = None, *, name: str | None = None, model: str | None = None,
             metadata: dict[str, Any] | None = None) -> Session:
        """A new session sharing this one's messages up to ``at`` (default: the last), titled
        as this one, marked "(fork)"; ``model`` and ``metadata`` for its row (a comparison's)."""
        store = self.forge.services.store
        self.forge.flush()
        if at is None:
            n = store.timeline_length(self.id)
            if n == 0:
                raise NotFound(f"session {self.id} has no messages to fork from")
            at = store.timeline(self.id, cursor=str(n - 1), limit=1, with_parts=False).items[0].id
        info = SessionInfo(name=name, title=fork_title(self._title(store)), agent=self.info.agent,
                           model=model or self.info.model, directory=self.info.directory,
                           metadata=metadata or {})
        return Session(self.forge, store.fork(self.id, at, info))

    def _title(self, store: Any) -> str | None:
        """The stored title, else the first prompt's (a session of an older file, a fork)."""
        if self.info.title:
            return self.info.title
        first = store.timeline(self.id, limit=1).items
        return title_of(first[0].text) if first and first[0].role == "user" else None
