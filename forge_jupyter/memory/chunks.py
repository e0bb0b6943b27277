"""Markdown into chunks with their line ranges, and text into search terms.

A chunk is a run of lines that reads on its own: a heading starts a new one, and one never
grows past ``CHUNK_CHARS`` (a longer single line is cut into pieces carrying its line number).
Terms are Unicode words, NFKC-normalized and case-folded, the same for a document and a
query; ``snake_case`` names count as a whole and as their parts.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass

CHUNK_CHARS = 1_200
MAX_TERM_CHARS = 64
_WORD = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class Chunk:
    start_line: int  # 1-based, inclusive
    end_line: int
    text: str


def terms(text: str) -> list[str]:
    """The search terms of ``text``, in order, repeats kept."""
    out: list[str] = []
    for word in _WORD.findall(unicodedata.normalize("NFKC", text).casefold()):
        if len(word) > MAX_TERM_CHARS:
            continue
        out.append(word)
        if "_" in word:
            out.extend(p for p in word.split("_") if p)
    return out


def term_counts(text: str) -> dict[str, int]:
    return dict(Counter(terms(text)))


def chunk_markdown(text: str) -> list[Chunk]:
    """``text`` split into chunks of whole lines (blank-only chunks left out)."""
    chunks: list[Chunk] = []
    lines: list[str] = []
    start = 1
    size = 0

    def close(end: int) -> None:
        nonlocal lines, size
        body = "\n".join(lines).strip("\n")
        if body.strip():
            chunks.append(Chunk(start, end, body))
        lines, size = [], 0

    for number, line in enumerate(text.splitlines(), start=1):
        heading = line.lstrip().startswith("#")
        if lines and (heading or size + len(line) + 1 > CHUNK_CHARS):
            close(number - 1)
        if not lines:
            start = number
        if len(line) > CHUNK_CHARS:
            for i in range(0, len(line), CHUNK_CHARS):
                lines, start = [line[i:i + CHUNK_CHARS]], number
                close(number)
            continue
        lines.append(line)
        size += len(line) + 1
    if lines:
        close(start + len(lines) - 1)
    return chunks
