"""A session's title: the first line of its first prompt — no model call, nothing to wait for."""

from __future__ import annotations

TITLE_CHARS = 80  # longer first lines are cut at a word end, with "…"


def title_of(prompt: str | None) -> str | None:
    """The title a prompt gives its session: its first line with words in it, whitespace runs
    made one space, at most ``TITLE_CHARS`` characters; None for a prompt with no words."""
    line = next((" ".join(raw.split()) for raw in (prompt or "").splitlines() if raw.strip()), "")
    if not line:
        return None
    if len(line) <= TITLE_CHARS:
        return line
    cut = line[:TITLE_CHARS - 1]
    space = cut.rfind(" ")
    if space >= TITLE_CHARS // 2:  # a word end not too far back; else cut inside the word
        cut = cut[:space]
    return cut.rstrip() + "…"


FORK_MARK = " (fork)"


def fork_title(parent: str | None) -> str | None:
    """A fork's title: its parent's, marked, so the two read apart in every list (a fork of
    a fork is marked once: its own row says which session it came from)."""
    if not parent:
        return None
    return parent if parent.endswith(FORK_MARK) else parent + FORK_MARK
