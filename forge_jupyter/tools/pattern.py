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

from typing import Any

import regex

from ..errors import ToolError

BUDGET = 1.0  # seconds one search (a line, a path) may take; a real pattern needs far less

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


def stopped(what: str) -> ToolError:
    """The error a tool raises when it sees its Stop between steps."""
    return ToolError(f"{what} was stopped (its timeout or Stop) before it finished.")
