"""The bounds on what the agent reads of a notebook, declared once; each, when it applies, is
stated in what the model reads (``Cut.note``)."""

from __future__ import annotations

from dataclasses import dataclass

OUTPUT_CHARS = 2_000  # one output's text
CELL_CHARS = 6_000  # one cell: its source and its outputs
CALL_CHARS = 20_000  # one notebook_read call
LIST_CELLS = 200  # cells one listing shows
HTML_PARSE_CHARS = 200_000  # HTML is cut to this before it is turned into text
SAVED_BYTES = 64 * 1024 * 1024  # a saved .ipynb larger than this is not read
TRACEBACK_FRAMES = 3  # the last frames of an error the context note shows
NOTE_CHARS = 1_500  # the context note each prompt carries
SEARCH_HITS = 50  # cells a search shows
LIVE_WAIT = 3.0  # seconds the page has to send its cells
LIVE_OUTPUT_CHARS = 100_000  # characters of each output's data the page sends
MENTION_CHARS = 8_000  # one thing a prompt points at (@df, @In[3], @file:…)
MENTIONS_CHARS = 24_000  # everything one prompt points at
CALL_IMAGES = 8  # images one notebook_read call hands on (a vision model gets images_per_step)
LIVE_IMAGE_CHARS = 8_000_000  # base64 characters of one image the page sends whole (~6 MB)


@dataclass(frozen=True)
class Cut:
    """Text within a bound, and what was left out (None when it fit)."""

    text: str
    note: str | None = None


def cut(text: str, limit: int, what: str, *, tail: bool = False) -> Cut:
    """``text`` within ``limit`` characters, at a line end when one is near, with a note;
    ``tail`` keeps the end (a traceback's last frames) rather than the start."""
    if len(text) <= limit:
        return Cut(text)
    if tail:
        end = text[-limit:]
        newline = end.find("\n")
        if 0 <= newline <= limit // 4:
            end = end[newline + 1:]
        return Cut(end, f"[{what} cut: its last {len(end):,} of {len(text):,} characters]")
    head = text[:limit]
    newline = head.rfind("\n")
    if newline >= limit * 3 // 4:
        head = head[:newline]
    return Cut(head, f"[{what} cut at {len(head):,} of {len(text):,} characters]")
