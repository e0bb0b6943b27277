"""``StreamScrubber``: scrubbing text that arrives in pieces (streamed model text, printed
output), holding back only what could still become part of a secret."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .rules import HOLD_MAX, NAMES_VALUE, PEM_END, SHORTEST

if TYPE_CHECKING:
    from .scrubber import Scrubber

_SPACE = " \t\r\n"


def _last_space(s: str, end: int) -> int:
    """Index of the last whitespace character (space, tab, line end) before ``end``, or -1."""
    return max(s.rfind(" ", 0, end), s.rfind("\n", 0, end), s.rfind("\t", 0, end),
               s.rfind("\r", 0, end))


def _last_eol(s: str, end: int) -> int:
    return max(s.rfind("\n", 0, end), s.rfind("\r", 0, end))


class StreamScrubber:
    """Scrubs text given piece by piece: ``feed`` returns what may be shown now, ``flush`` the
    rest at the end. Joined, the pieces are the whole text scrubbed at once, except that a run
    of more than HOLD_MAX characters with no safe place to cut is let go in part.

    What is held back: in ``lines`` mode, the unfinished line; else the unfinished word, and a
    secret's name whose value has not ended yet (``password: "my secr``). Never an unfinished
    private-key block, nor anything a known value with spaces in it may still cover.
    """

    __slots__ = ("_scrubber", "_carry", "_hold", "_lines")

    def __init__(self, scrubber: Scrubber, *, lines: bool = False) -> None:
        self._scrubber = scrubber
        self._carry = ""
        self._lines = lines
        self._hold = scrubber._hold_lines if lines else scrubber._hold_words

    def feed(self, text: str) -> str:
        if not text:
            return ""
        s = self._carry + text if self._carry else text
        # The fast path: a piece with no place to cut in it only adds to what is held back.
        if not self._hold and len(s) <= HOLD_MAX and (
                ("\n" not in text and "\r" not in text) if self._lines
                else (" " not in text and "\n" not in text and "\t" not in text
                      and "\r" not in text)):
            self._carry = s
            return ""
        if (not self._lines and not self._hold and s[-1] in _SPACE and ":" not in s
                and "=" not in s and "earer" not in s and "EARER" not in s and "-----" not in s):
            self._carry = ""  # the other fast path: whole words, and nothing that waits
            if len(s) < SHORTEST and s.isascii():
                return s  # too short to hold a secret, and valid
            return self._scrubber(s) or ""
        cut = self._cut(s)
        if len(s) - cut > HOLD_MAX:  # held too long: let the oldest half go, secrets whole
            cut = len(s) - HOLD_MAX // 2
            for start, end in sorted(self._scrubber.spans(s)):
                if start < cut < end:
                    cut = start
                    break
        if cut <= 0:
            self._carry = s
            return ""
        self._carry = s[cut:]
        return self._scrubber(s[:cut]) or ""

    def flush(self) -> str:
        s, self._carry = self._carry, ""
        return self._scrubber(s) or ""

    def _cut(self, s: str) -> int:
        """Where ``s`` may be cut: nothing before it can still become part of a secret. Each
        rule only moves the cut back, and may expose what another rule moves back from."""
        n = len(s)
        if self._lines:
            cut = _last_eol(s, n) + 1
        else:
            cut = n if s[-1] in _SPACE else _last_space(s, n) + 1
        while cut:
            before = cut
            if self._hold:  # a known value with spaces in it may be unfinished at the end…
                limit = max(0, n - self._hold)
                if cut > limit:
                    cut = (_last_eol(s, limit) if self._lines else _last_space(s, limit)) + 1
                cut = self._outside_known(s, cut)  # …or whole, across the cut
            if not self._lines and (":" in s or "=" in s):
                cut = self._before_open_value(s, cut)
            if not self._lines and ("earer" in s or "EARER" in s):  # "Bearer" awaits its token
                end = cut
                while end and s[end - 1] in _SPACE:
                    end -= 1
                start = _last_space(s, end) + 1
                if s[start:end].lower() == "bearer":
                    cut = start
            if "-----BEGIN" in s:  # a private key's block, until its end line is whole
                begin = s.rfind("-----BEGIN", 0, cut)
                if begin != -1 and not PEM_END.search(s, begin, cut):
                    cut = begin
            if cut == before:
                break
        return cut

    def _outside_known(self, s: str, cut: int) -> int:
        """``cut``, moved back to the start of a known value with spaces that it would split."""
        moved = True
        while moved and cut:
            moved = False
            for value in self._scrubber._spaced:
                i = s.find(value, max(0, cut - len(value) + 1), cut + len(value) - 1)
                if i != -1 and i < cut:
                    cut, moved = i, True
        return cut

    def _before_open_value(self, s: str, cut: int) -> int:
        """``cut``, or the start of the word holding a secret's name, on the cut's line, whose
        value has not ended before the cut (``password: "my secr``, ``token: `` …)."""
        line = _last_eol(s, cut) + 1
        for m in NAMES_VALUE.finditer(s, line, cut):
            rest = s[m.end():cut].lstrip(" \t")
            if rest[:1] in ("\"", "'"):
                is_open = rest[0] not in rest[1:]  # the closing quote has not come
            elif m.group().endswith(":"):  # name: value — counts when alone to the line end
                is_open = not rest or not rest.split(None, 1)[1:]
            else:
                is_open = not rest  # name=value ends at the first space
            if is_open:
                return _last_space(s, m.start()) + 1
        return cut
