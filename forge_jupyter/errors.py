"""Typed errors. Each message says what happened and what to do next."""

from __future__ import annotations

import math
import numbers


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


class LeaseLost(SessionBusy):
    """A write fenced by a runner lease its owner no longer holds: another runner took the
    session over (or the lease was given back). Nothing of the batch was written."""

    def __init__(self, message: str, session_ids: tuple[str, ...] = (),
                 holders: dict[str, str | None] | None = None) -> None:
        super().__init__(message)
        self.session_ids = session_ids  # the sessions whose lease the writer lost
        self.holders = holders or {}  # who holds each now (None: nobody)


class StoreUnavailable(ForgeError):
    """The store cannot be written right now (a lock held elsewhere, a full disk, an I/O
    error): nothing is wrong with the rows, so buffered rows are kept for the next flush."""


class StoreLocked(StoreUnavailable):
    """The database file stayed locked by another program past the retry budget."""


class StoreUnreadable(ForgeError):
    """The path cannot hold a forge-jupyter database: not a database, damaged (truncated),
    a directory, a name the OS refuses. The file is left as it is."""


class AccessRefused(ForgeError):
    """The database refused this login role what a call asked for: a tenant it is not pinned
    to, or a right nobody granted it (a read-only role writing, a table not granted)."""


class SchemaTooNew(ForgeError):
    """The database was written by a newer forge-jupyter than this one."""


class BudgetExceeded(ForgeError):
    """The estimated cost of a prompt exceeds the budget it was given."""


class InvalidOption(ForgeError, ValueError):
    """An option with a value that cannot work (a budget of 0, a negative timeout)."""


def positive_number(value: object, what: str, hint: str) -> float:
    """``value`` as a float if it is a finite number above 0, else InvalidOption naming it.

    Refused: 0, negatives, NaN (every comparison with it is False, so a NaN limit would
    never trigger), infinity, booleans and strings (``"0.25"`` is a typo, not a number).
    """
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        number = float(value)
        if math.isfinite(number) and number > 0:
            return number
    raise InvalidOption(f"{what} must be a number greater than 0, got {value!r}. {hint}")


class ModelTimeout(ForgeError, TimeoutError):
    """The model server accepted the request but sent nothing for ``stream_timeout`` seconds."""

    def __init__(self, message: str, seconds: float) -> None:
        super().__init__(message)
        self.seconds = seconds


class ApprovalPending(Conflict):
    """A prompt was sent while a tool call of the session awaits a person's answer."""


class NestedTurn(ForgeError):
    """Code a tool runs (python, notebook_run) tried to start a turn or run forge's magics:
    that would be a turn inside the turn that is running it (tools/nested.py)."""


class ToolError(ForgeError):
    """A tool call that could not run: the message goes back to the model."""


def positive_int(value: object, what: str, hint: str) -> int:
    """``value`` if it is an int above 0 (a float with no fraction passes), else InvalidOption;
    booleans and strings are refused as in ``positive_number``."""
    number = positive_number(value, what, hint)
    if number != int(number):
        raise InvalidOption(f"{what} must be a whole number greater than 0, got {value!r}. {hint}")
    return int(number)
