"""A session's title: the first line of its first prompt — no model call, nothing to wait for."""

from __future__ import annotations

from ..tools.base import TITLE_CHARS, title_line

__all__ = ["TITLE_CHARS", "title_of"]


def title_of(prompt: str | None) -> str | None:
    """The title a prompt gives its session: its first line with words in it, whitespace runs
    made one space, at most ``TITLE_CHARS`` characters (cut at a word end, with "…"); None for
    a prompt with no words."""
    return title_line(prompt)
