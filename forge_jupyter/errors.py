"""Typed errors. Each message says what happened and what to do next."""

from __future__ import annotations


class ForgeError(Exception):
    """Base class of every error forge-jupyter raises on purpose."""


class NotFound(ForgeError):
    """A session, message or part that does not exist (for this tenant)."""


class SessionDeleted(NotFound):
    """The session existed and was deleted; nothing can be written to it."""


class Conflict(ForgeError):
    """A write that collides with what is stored (a duplicate id, a concurrent runner)."""


class DuplicateId(Conflict):
    """An id that already names a row of another session or tenant."""


class Immutable(Conflict):
    """A write to a finished message or part: terminal rows never change."""


class MessageRunning(Conflict):
    """A fork from, or continuation after, a message that has not finished."""


class SessionBusy(Conflict):
    """Another prompt is running in this session (here or in another kernel)."""


class StoreLocked(ForgeError):
    """The database file stayed locked by another program past the retry budget."""


class StoreUnreadable(ForgeError):
    """The file at the configured path is not a forge-jupyter database."""


class SchemaTooNew(ForgeError):
    """The database was written by a newer forge-jupyter than this one."""


class BudgetExceeded(ForgeError):
    """The estimated cost of a prompt exceeds the budget it was given."""


class ApprovalPending(Conflict):
    """A prompt was sent while a tool call of the session awaits a person's answer."""


class ToolError(ForgeError):
    """A tool call that could not run: the message goes back to the model."""
