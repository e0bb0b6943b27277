"""One global limit on what the model sees of a tool's output; the full output goes to disk.

Over the limit (2,000 lines or 50 KB, whichever comes first) the head is kept, whole lines
only, and the full output is saved as ``<output_dir>/<name>.txt``; a footer says how much was
cut, where the rest is and how to page through it with ``read``. The tool did run; only what
the model sees is cut.

Everything written is scrubbed of secrets and made valid Unicode first (``scrub.Scrubber``, the
environment's unless one is given), line by line as it streams: neither the head the model
sees nor the file on disk ever holds a key the output printed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..scrub import Scrubber, valid_text
from .paths import AtomicFile

MAX_LINES = 2000
MAX_BYTES = 50 * 1024
READ_PAGE = 2000  # the page size the footer suggests for read(limit=…)

_CHUNK = 1 << 18  # characters encoded at a time, so a huge output is never encoded whole
_ENCODING_ERRORS = "replace"  # never needed (text is made valid first); never raise either


@dataclass(frozen=True)
class Truncated:
    """What the model sees (``text``) and what there was."""

    text: str
    truncated: bool
    total_lines: int
    total_bytes: int
    saved_path: str | None = None  # the full output, when truncated and an output folder exists


def _chunks(s: str) -> Iterator[bytes]:
    for i in range(0, len(s), _CHUNK):
        yield s[i:i + _CHUNK].encode("utf-8", _ENCODING_ERRORS)


def utf8_len(s: str) -> int:
    """Bytes of ``s`` in UTF-8, without building the encoded copy of a long string."""
    if s.isascii():
        return len(s)
    return sum(len(b) for b in _chunks(s))


def format_bytes(n: int) -> str:
    if n < 1024:
        return f"{n:,} bytes"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KB"
    return f"{n / (1024 * 1024):.1f} MB"


def _cut_bytes(s: str, n: int) -> str:
    """The longest prefix of ``s`` that fits in ``n`` UTF-8 bytes."""
    return s[:n].encode("utf-8", _ENCODING_ERRORS)[:n].decode("utf-8", "ignore")


def _head(prefix: str, max_lines: int, max_bytes: int) -> tuple[str, int]:
    """(head, whole lines in it) of an output over the limit, given its first max_bytes+1 chars.

    A line without its newline is never whole here: the output goes on past the prefix.
    When even the first line is over the byte limit, the head is as much of it as fits.
    """
    pos = used = lines = 0
    while lines < max_lines:
        nl = prefix.find("\n", pos)
        if nl == -1:
            break
        size = utf8_len(prefix[pos:nl + 1])
        if used + size > max_bytes:
            break
        used, pos, lines = used + size, nl + 1, lines + 1
    if lines == 0:
        return _cut_bytes(prefix, max_bytes), 0
    return prefix[:pos], lines


def plural(n: int, word: str, words: str | None = None) -> str:
    """``1 line``, ``2 lines``; irregular plurals are given: ``plural(n, "match", "matches")``."""
    return f"{n:,} {word if n == 1 else words or word + 's'}"


def _footer(*, head_lines: int, head_bytes: int, total_lines: int, total_bytes: int,
            saved: str | None, max_lines: int, max_bytes: int) -> str:
    if head_lines:
        text = (f"\n\n… [output truncated: showing lines 1–{head_lines:,} of {total_lines:,} "
                f"({format_bytes(head_bytes)} of {format_bytes(total_bytes)}); "
                f"{plural(total_lines - head_lines, 'more line')} cut. The limit is "
                f"{max_lines:,} lines or {format_bytes(max_bytes)}.]")
    else:
        text = (f"\n\n… [output truncated: showing the first {format_bytes(head_bytes)} of line 1, "
                f"which alone is over the {format_bytes(max_bytes)} limit; the output has "
                f"{plural(total_lines, 'line')} ({format_bytes(total_bytes)}).]")
    if saved is None:
        return text + ("\nThe full output was not saved (this session has no output folder); "
                       "run a narrower command to see the rest.")
    return text + (f"\nThe full output is saved in {saved}. Page through it with "
                   f'read(path="{saved}", offset={head_lines}, limit={READ_PAGE}) (offset = lines to '
                   "skip), or run a narrower command instead of reading it all.")


def _file_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)[:120] or "output"


class BoundedOutput:
    """A tool's output written piece by piece, holding at most the head in memory.

    Until the output passes the limit it is kept whole; from then on only the head stays in
    memory and everything (from the first byte) streams to ``<output_dir>/<name>.txt``, which
    appears atomically when ``result()`` is called.
    """

    def __init__(self, output_dir: str | Path | None, name: str, *,
                 max_lines: int = MAX_LINES, max_bytes: int = MAX_BYTES,
                 scrubber: Scrubber | None = None) -> None:
        self.output_dir = Path(output_dir) if output_dir is not None else None
        # Whole lines are scrubbed; the unfinished one waits (a key may be cut across writes).
        self._scrub = (scrubber or Scrubber.from_environment()).stream(lines=True)
        self.name = name
        self.max_lines, self.max_bytes = max_lines, max_bytes
        self._pieces: list[str] = []  # the whole output, while it is under the limit
        self._head: str | None = None  # set once the output passes the limit
        self._head_lines = 0
        self._file: AtomicFile | None = None
        self._newlines = 0
        self._bytes = 0
        self._open_line = False  # the output so far ends inside a line
        self._result: Truncated | None = None

    @property
    def lines(self) -> int:
        return self._newlines + (1 if self._open_line else 0)

    @property
    def over(self) -> bool:
        return self._head is not None

    def write(self, s: str) -> int:
        if self._result is not None:
            raise ValueError("write() after result(): this output is finished")
        for i in range(0, len(s), _CHUNK):  # a piece at a time: a huge string is never copied
            self._take(self._scrub.feed(valid_text(s[i:i + _CHUNK])))
        return len(s)

    def _take(self, s: str) -> None:
        """Count and keep (or save) scrubbed text."""
        if not s:
            return
        self._newlines += s.count("\n")
        self._open_line = not s.endswith("\n")
        if self._head is not None:
            self._bytes += self._save(s)
            return
        self._bytes += utf8_len(s)
        self._pieces.append(s)
        if self.lines > self.max_lines or self._bytes > self.max_bytes:
            self._spill()

    def _spill(self) -> None:
        need, prefix = self.max_bytes + 1, []  # a head of max_bytes holds at most as many chars
        for p in self._pieces:
            prefix.append(p[:need])
            need -= len(prefix[-1])
            if need <= 0:
                break
        self._head, self._head_lines = _head("".join(prefix), self.max_lines, self.max_bytes)
        if self.output_dir is not None:
            self._file = AtomicFile(self.output_dir / f"{_file_name(self.name)}.txt")
        pieces, self._pieces = self._pieces, []
        for p in pieces:
            self._save(p)

    def _save(self, s: str) -> int:
        if self._file is None:
            return utf8_len(s)
        n = 0
        for b in _chunks(s):
            self._file.write(b)
            n += len(b)
        return n

    def result(self) -> Truncated:
        """What the model sees; saves the full output first when it is over the limit."""
        if self._result is not None:
            return self._result
        self._take(self._scrub.flush())
        if self._head is None:
            self._result = Truncated("".join(self._pieces), False, self.lines, self._bytes)
            return self._result
        saved = str(self._file.commit()) if self._file is not None else None
        footer = _footer(head_lines=self._head_lines, head_bytes=utf8_len(self._head),
                         total_lines=self.lines, total_bytes=self._bytes, saved=saved,
                         max_lines=self.max_lines, max_bytes=self.max_bytes)
        self._result = Truncated(self._head + footer, True, self.lines, self._bytes, saved)
        return self._result

    def discard(self) -> None:
        """Drop a half-written output (the producer failed): no file is left behind."""
        if self._file is not None and self._result is None:
            self._file.discard()
            self._file = None

    def __enter__(self) -> BoundedOutput:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None:
            self.discard()


def truncate(text: str, *, output_dir: str | Path | None, name: str,
             max_lines: int = MAX_LINES, max_bytes: int = MAX_BYTES,
             scrubber: Scrubber | None = None) -> Truncated:
    """``text`` scrubbed and cut to the global limit, the full text (scrubbed) saved as
    ``<output_dir>/<name>.txt``."""
    out = BoundedOutput(output_dir, name, max_lines=max_lines, max_bytes=max_bytes,
                        scrubber=scrubber)
    out.write(text)
    return out.result()


# ------------------------------------------------------------------ the tools' own, lower caps

MAX_LINE_CHARS = 2000  # read (and grep) cut any single line past this
MAX_ENTRIES = 100  # listing and search tools show this many entries


def cut_line(text: str, total_bytes: int | None = None) -> str:
    """``text`` with everything past MAX_LINE_CHARS replaced by a marker. ``total_bytes``:
    the length of the whole line when ``text`` is only its beginning."""
    if len(text) <= MAX_LINE_CHARS and total_bytes is None:
        return text
    size = format_bytes(total_bytes) if total_bytes is not None else f"{len(text):,} characters"
    return f"{text[:MAX_LINE_CHARS]}… [line cut at {MAX_LINE_CHARS:,} characters; it is {size} long]"


def and_more(hidden: int, hint: str) -> str:
    """The line that closes a list cut at MAX_ENTRIES (empty when nothing was cut)."""
    return f"… and {hidden:,} more ({hint})" if hidden > 0 else ""
