"""Where a provider's web search says an answer came from: the pages its citations name.

A text part keeps its citations as the wire had them (``metadata["citations"]``,
session/server_parts.py): Anthropic's ``web_search_result_location`` (``url``, ``title``) and
OpenAI's ``url_citation`` annotations (``{"url_citation": {"url", "title"}}``). What a person
reads is the list of pages, each once, in the order first cited. The provider's data is
untrusted like the model's: only an absolute http(s) URL without spaces or control characters
becomes a link, titles are plain text, and the list is bounded. Mirrored by ``citedSources`` in
labextension/src/render/words.ts (tests/browser/test_widget_words_js.py pins that they agree).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

MAX_SOURCES = 20
MAX_TITLE = 120  # characters of a title shown
MAX_URL = 2048
_BLANKS = re.compile(r"[\x00-\x20\x7f]")
# no space, control character or Unicode blank anywhere in a link (spelled out, not \s: the
# same characters as words.ts's, whose \s differs from Python's)
_URL = re.compile("https?://[^\x00-\x20\x7f-\x9f\u00a0\u1680\u2000-\u200b\u2028\u2029"
                  "\u202f\u205f\u3000\ufeff]+", re.IGNORECASE)


def cited_sources(citations: object) -> list[tuple[str, str]]:
    """(url, title) of each page the citations name, once each, first cited first; a page
    with no title is titled by its URL."""
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for item in citations if isinstance(citations, list) else ():
        if not isinstance(item, dict):
            continue
        inner = item.get("url_citation")
        source = inner if isinstance(inner, dict) else item
        url, title = source.get("url"), source.get("title")
        if not isinstance(url, str) or len(url) > MAX_URL or not _URL.fullmatch(url) \
                or url in seen:
            continue
        seen.add(url)
        # ASCII spaces and control characters become one space (Unicode text stays as sent)
        words = " ".join(_BLANKS.sub(" ", title).split(" ")) if isinstance(title, str) else ""
        words = " ".join(w for w in words.split(" ") if w)
        if len(words) > MAX_TITLE:
            words = words[:MAX_TITLE - 1] + "…"
        out.append((url, words or url))
        if len(out) == MAX_SOURCES:
            break
    return out


def sources_of(parts: Iterable[Any]) -> list[tuple[str, str]]:
    """The pages cited by these parts' texts, once each."""
    citations: list[Any] = []
    for p in parts:
        if getattr(p, "type", None) == "text":
            found = (getattr(p, "metadata", None) or {}).get("citations")
            if isinstance(found, list):
                citations += found
    return cited_sources(citations)
