"""A session's title: the first line of its first prompt — no model call, nothing to wait for."""

from __future__ import annotations

from ..tools.base import TITLE_CHARS, title_line

__all__ = ["FORK_MARK", "TITLE_CHARS", "fork_title", "title_of"]


def title_of(prompt: str | None) -> str | None:
    """The title a prompt gives its session: its first line with words in it, whitespace runs
    made one space, at most ``TITLE_CHARS`` characters (cut at a word end, with "…"); None for
    a prompt with no words."""
    return title_line(prompt)


FORK_MARK = " (fork)"


def fork_title(parent: str | None) -> str | None:
    """A fork's title: its parent's, marked, so the two read apart in every list (a fork of
    a fork is marked once: its own row says which session it came from)."""
    if not parent:
        return None
    return parent if parent.endswith(FORK_MARK) else parent + FORK_MARK
