"""Matching the model's patterns (grep's regular expressions, glob's and include's globs).

A pattern from the model is untrusted in time: in Python's ``re``, ``(a+)+$`` or the glob
``*?*?*?…x`` backtracks for seconds that double with each character, holding the GIL — so
Stop, the timeout and every other cell wait, and nothing can interrupt it. Every such pattern
is matched here instead, with the ``regex`` engine (the syntax of ``re``, plus more): each
search gives the GIL up while it runs and ends after ``BUDGET`` seconds at most; one that
would run longer fails the call with an error saying how to rewrite the pattern. Between
searches the tool checks its ``Stop`` (tools/threads.py), so a stopped call ends within a
search's budget.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterator
from typing import Any

import regex

from ..errors import ToolError

BUDGET = 1.0  # CPU seconds one search (a line, a path) may take; a real pattern needs far less

Pattern = regex.Pattern


def compile_pattern(pattern: str, flags: int = 0) -> Any:
    """``pattern`` compiled, or a ToolError saying what is wrong with it."""
    try:
        return regex.compile(pattern, flags)
    except regex.error as exc:
        raise ToolError(f"{pattern!r} is not a valid regular expression: {exc}. Escape special "
                        "characters (e.g. `\\(`) to match them literally.") from None


def _too_slow(shown: str, where: str) -> ToolError:
    return ToolError(
        f"The pattern {shown!r} took more than {BUDGET:g} s on {where}, so the search was "
        "stopped: it backtracks without bound (nested repetition such as (a+)+, or "
        "alternatives that overlap such as (a|aa)+). Rewrite it without nested quantifiers, "
        "or narrow it with literal text.")


def search(rx: Any, text: str, *, shown: str, where: str) -> bool:
    """Whether ``rx`` matches somewhere in ``text``, within the budget (the GIL given up)."""
    try:
        return rx.search(text, timeout=BUDGET, concurrent=True) is not None
    except TimeoutError:
        raise _too_slow(shown, where) from None


def full_match(rx: Any, text: str, *, shown: str, where: str) -> bool:
    """Whether ``rx`` matches at the start of ``text`` (its own ``\\Z`` ends it)."""
    try:
        return rx.match(text, timeout=BUDGET, concurrent=True) is not None
    except TimeoutError:
        raise _too_slow(shown, where) from None


# What lets a match depend on the lines around it: lookaround, string anchors, flags that turn
# MULTILINE off or search backwards. Conservative: a false alarm only costs speed.
_CONTEXT = regex.compile(r"\(\?<?[=!]|\\[AZzG]|\(\?[a-zA-Z0-9^-]*[-mr^]")


class LinePattern:
    """grep's pattern, matched line by line (each line on its own: ``^`` and ``$`` at its
    ends, nothing of its neighbours visible)."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.rx = compile_pattern(pattern)
        self._block = None if _CONTEXT.search(pattern) else \
            compile_pattern(pattern, regex.MULTILINE)

    def matching(self, lines: list[str], where: Callable[[int], str],
                 stop: Callable[[], bool]) -> Iterator[int]:
        """Indices of the ``lines`` that match; ``where(i)`` names line i for an error,
        ``stop()`` says the call has ended."""
        candidates = range(len(lines)) if self._block is None else \
            self._candidates(lines, stop)
        for i in candidates:
            if stop():
                return
            if search(self.rx, lines[i], shown=self.pattern, where=where(i)):
                yield i

    def _candidates(self, lines: list[str], stop: Callable[[], bool]) -> list[int]:
        """The lines a match in the block touches: every line that matches alone is one (the
        block has the same text and line ends), some others may be (a match across lines)."""
        starts, at = [], 0
        for line in lines:
            starts.append(at)
            at += len(line) + 1
        found: list[int] = []
        try:
            for m in self._block.finditer("\n".join(lines), timeout=BUDGET, concurrent=True):
                first = bisect_right(starts, m.start()) - 1
                last = bisect_right(starts, max(m.end() - 1, m.start())) - 1
                found.extend(range(max(first, found[-1] + 1 if found else 0), last + 1))
                if stop():
                    break
        except TimeoutError:  # slow somewhere: each line on its own, with its own budget
            return list(range(len(lines)))
        return found


def stopped(what: str) -> ToolError:
    """The error a tool raises when it sees its Stop between steps."""
    return ToolError(f"{what} was stopped (its timeout or Stop) before it finished.")
