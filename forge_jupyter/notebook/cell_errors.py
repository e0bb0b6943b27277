"""How a ``%%forge`` cell fails: one short error output, never a traceback (docs/notebook.md).

A turn that ended in error fails its cell the way any failing cell does — Run All,
``nbconvert --execute`` and papermill stop there — and the error output's name and value say
what happened and what to do, so a CI log shows it (papermill prints only those two). The
traceback a person would scroll is the message again: the frames are forge's, not theirs
(IPython shows ``_render_traceback_`` instead of the frames).

An interrupt (the kernel's ■, Ctrl-C) is a plain ``KeyboardInterrupt`` of one line, like any
interrupted cell: the turn's record above already says it stopped and what it kept.
"""

from __future__ import annotations

from typing import Any

RED, RESET = "\x1b[0;31m", "\x1b[0m"


def _one_line(text: str) -> str:
    return " ".join(text.split())


class CellError(Exception):
    """A ``%%forge`` cell that failed for a known reason: its name and message, no frames."""

    def __init__(self, message: str) -> None:
        super().__init__(_one_line(message))

    def _render_traceback_(self) -> list[str]:
        return [f"{RED}{type(self).__name__}{RESET}: {self}"]


class ForgeModelError(CellError):
    """The model (or its server) failed the turn: errors, refused keys, a doom loop."""


class ForgeReplayError(CellError):
    """A strict replay could not hold: the recording differs, or none matches."""


# What to do next, by what the model's failure was, where its own words do not say it.
_CREDENTIAL_HINT = ("check", "set ")


def model_error(answer: Any) -> ForgeModelError | None:
    """The error a turn's final message fails its cell with, or None when it did not fail.

    A stop by the person (``aborted``), an interrupt, a budget or step limit reached are not
    failures: the turn ended where someone chose, with its work kept (docs/notebook.md)."""
    if answer is None or getattr(answer, "status", None) != "error" or answer.error is None:
        return None
    kind, message = answer.error.type, _one_line(answer.error.message).rstrip(".")
    if kind.startswith("replay-"):
        return None  # a replay's own verdict (replay_cell.check)
    if kind == "doom_loop":
        step = ("the model repeated the same failing call, so forge stopped the turn. Say what "
                "to do differently in the next cell, or try another model (%%forge -m MODEL)")
    elif kind == "context_window":
        step = "run %forge compact, or start a new session (%%forge --new), then run the cell again"
    elif any(word in message.lower() for word in _CREDENTIAL_HINT):
        step = ""  # the message already says which setting to fix
    else:
        step = ("run the cell again when the model server answers, or choose another model "
                "(%%forge -m MODEL); the failed turn is kept in the session (%forge history)")
    return ForgeModelError(f"{message}." + (f" Next: {step}." if step else ""))


def short_interrupt() -> KeyboardInterrupt:
    """A ``KeyboardInterrupt`` that shows as one line: the frames would be litellm's and
    aiohttp's, under a record that already says the turn stopped."""
    exc = KeyboardInterrupt()
    exc._render_traceback_ = lambda: [f"{RED}KeyboardInterrupt{RESET}: the turn was stopped; "  # type: ignore[attr-defined]
                                      "its record above keeps what it did"]
    return exc
