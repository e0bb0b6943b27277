"""The spellings a known secret takes in printed output, and one pattern that finds them all.

A value is hidden as it is and as it is escaped or encoded (JSON, repr, percent-encoding,
base64 at each alignment, hex); the scrubber finds every spelling of every value with one
trie-shaped regular expression built once.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote, quote_plus, urlsplit

from .rules import MIN_LENGTH


def has_password(value: str) -> bool:
    if "://" not in value or "@" not in value:
        return False
    try:
        return bool(urlsplit(value).password)
    except ValueError:
        return False


def variants(value: str) -> set[str]:
    """The spellings a value takes in printed output: as is, JSON-escaped, in a repr,
    percent-encoded, base64 (standard and URL-safe, at each of the three byte alignments it
    can have inside a longer encoding), hex in either case. Of a URL with a password, the
    password alone."""
    if "://" in value:  # a URL with a password: the URL rule keeps the rest of it readable
        try:
            password = urlsplit(value).password
        except ValueError:
            password = None
        if password:
            value = password
    out = {value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1],
           repr(value)[1:-1], quote(value, safe=""), quote_plus(value, safe="")}
    raw = value.encode("utf-8", "surrogatepass")
    out |= {raw.hex(), raw.hex().upper()}
    for encoded in base64_spellings(raw):
        out |= {encoded, encoded.replace("+", "-").replace("/", "_")}
    return {v for v in out if len(v) >= MIN_LENGTH}


def base64_spellings(raw: bytes) -> list[str]:
    """``raw`` in base64 whole (with and without padding), and the characters that depend on
    ``raw`` alone when it starts 1 or 2 bytes into a longer encoded text (or is followed by
    more): whichever way it is embedded, one of these is in the encoding."""
    whole = base64.b64encode(raw).decode()
    out = [whole, whole.rstrip("=")]
    n = len(raw) * 8
    for shift in range(3):
        text = base64.b64encode(bytes(shift) + raw).decode()
        first = -(-shift * 8 // 6)  # the first character made of raw's bits only
        last = (shift * 8 + n) // 6  # past the last one
        out.append(text[first:last])
    return out


def trie_pattern(words: Iterable[str]) -> str:
    """One regular expression matching any of ``words`` — the longest at a place — as a trie:
    each position is turned down after a character or two, whatever the number of words (an
    alternation of the words themselves tries each one in turn: 10x slower at 600 words)."""
    trie: dict[str, Any] = {}
    for word in words:
        node = trie
        for c in word:
            node = node.setdefault(c, {})
        node[""] = {}

    escaped: dict[str, str] = {}

    def esc(c: str) -> str:
        e = escaped.get(c)
        if e is None:
            e = escaped[c] = re.escape(c)
        return e

    def build(node: dict[str, Any]) -> str:
        out = []
        while len(node) == 1 and "" not in node:  # a chain: no group needed
            (c, node), = node.items()
            out.append(esc(c))
        branches = [esc(c) + build(child) for c, child in node.items() if c]
        if branches:
            body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
            out.append(f"(?:{body})?" if "" in node else body)
        return "".join(out)

    return build(trie)
