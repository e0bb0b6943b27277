"""HTML → readable Markdown (or plain text) with the standard library's ``html.parser``.

What a model needs of a web page is its words and structure, not its markup: headings,
paragraphs, lists, links (made absolute), code blocks, quotes, tables as ``a | b`` rows,
emphasis. Scripts, styles, buttons, SVG, iframes and the page's ``<head>`` (its title aside) are
dropped. The parser is forgiving (unclosed tags, stray ends) and never executes or fetches
anything; the output is text the model reads, not HTML anyone renders.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import urljoin

_SKIP = frozenset({"script", "style", "noscript", "template", "svg", "math", "iframe", "object",
                   "embed", "canvas", "select", "button", "head"})
_BLOCK = frozenset({"p", "div", "section", "article", "main", "header", "footer", "nav",
                    "aside", "figure", "figcaption", "table", "tr", "ul", "ol", "dl", "dt", "dd",
                    "details", "summary", "address", "hr", "body", "html"})
_INLINE = {"strong": "**", "b": "**", "em": "*", "i": "*", "code": "`"}
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_VOID = frozenset({"br", "hr", "img", "input", "meta", "link", "area", "base", "col", "wbr",
                   "source", "track", "param"})
_SPACES = re.compile(r"[ \t\r\n\f\v]+")


class _Converter(HTMLParser):
    def __init__(self, base_url: str, markdown: bool) -> None:
        super().__init__(convert_charrefs=True)
        self.base = base_url
        self.md = markdown
        self.out: list[str] = []
        self.skip = 0  # depth inside a dropped element
        self.pre = 0
        self.title: list[str] = []
        self.in_title = False
        self.lists: list[list[int]] = []  # per open list: [ordered?, next number]
        self.links: list[str | None] = []
        self.quote = 0
        self.cell = 0  # cells written in the current table row

    # -- writing ---------------------------------------------------------------------------
    def _text(self, s: str) -> None:
        if s:
            self.out.append(s)

    def _break(self, blank: bool = True) -> None:
        """End the current line (and leave a blank line after a block), once."""
        tail = "".join(self.out[-3:]) if self.out else "\n\n"
        have = len(tail) - len(tail.rstrip("\n"))
        want = 2 if blank else 1
        if have < want:
            self.out.append("\n" * (want - have))

    def _inline(self, tag: str) -> None:
        """Emphasis and inline code, the same mark on both sides (none in plain text or <pre>)."""
        if self.md and not (tag == "code" and self.pre):
            self._text(_INLINE[tag])

    def _prefix(self) -> str:
        return "> " * self.quote if self.md else ""

    # -- parser callbacks ------------------------------------------------------------------
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":  # inside <head>, which is otherwise dropped
            self.in_title = True
        if tag in _SKIP:
            if tag not in _VOID:
                self.skip += 1
            return
        if self.skip:
            return
        a = dict(attrs)
        if tag in _HEADINGS:
            self._break()
            self._text(self._prefix() + ("#" * _HEADINGS[tag] + " " if self.md else ""))
        elif tag == "br":
            self._break(blank=False)
            self._text(self._prefix())
        elif tag == "hr":
            self._break()
            self._text("---" if self.md else "")
            self._break()
        elif tag in ("ul", "ol"):
            self.lists.append([tag == "ol", int(a.get("start") or 1) if (a.get("start") or "").isdigit() else 1])
            self._break(blank=len(self.lists) == 1)
        elif tag == "li":
            self._break(blank=False)
            depth = max(len(self.lists) - 1, 0)
            marker = "-"
            if self.lists and self.lists[-1][0]:
                marker = f"{self.lists[-1][1]}."
                self.lists[-1][1] += 1
            self._text(self._prefix() + "  " * depth + marker + " ")
        elif tag == "pre":
            self.pre += 1
            self._break()
            if self.md:
                self._text("```\n")
        elif tag in _INLINE:
            self._inline(tag)
        elif tag == "blockquote":
            self.quote += 1
            self._break()
            self._text(self._prefix())
        elif tag == "a":
            href = (a.get("href") or "").strip()
            target = None
            if href and not href.lower().startswith(("javascript:", "data:", "#")):
                target = urljoin(self.base, href)
            self.links.append(target)
            if target and self.md:
                self._text("[")
        elif tag == "img":
            alt = (a.get("alt") or "").strip()
            if alt:
                self._text(f"[image: {alt}]")
        elif tag in ("td", "th"):
            self._text(" | " if self.cell else "")
            self.cell += 1
        elif tag == "tr":
            self._break(blank=False)
            self.cell = 0
        elif tag in _BLOCK or tag == "p":
            self._break()
            self._text(self._prefix())

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        if tag in _SKIP:
            if tag not in _VOID:
                self.skip = max(self.skip - 1, 0)
            return
        if self.skip:
            return
        if tag in _HEADINGS or tag in ("p", "table", "dl", "figure"):
            self._break()
        elif tag in ("ul", "ol"):
            if self.lists:
                self.lists.pop()
            self._break(blank=not self.lists)
        elif tag == "pre":
            self.pre = max(self.pre - 1, 0)
            if self.md:
                self._text("\n```")
            self._break()
        elif tag in _INLINE:
            self._inline(tag)
        elif tag == "blockquote":
            self.quote = max(self.quote - 1, 0)
            self._break()
        elif tag == "a" and self.links:
            target = self.links.pop()
            if target and self.md:
                self._text(f"]({target})")

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title.append(data)
        if self.skip:
            return
        if self.pre:
            self._text(data)
            return
        text = _SPACES.sub(" ", data)
        if self.out and self.out[-1].endswith(("\n", "> ", "- ", ". ")) and text.startswith(" "):
            text = text.lstrip()
        self._text(text)


def html_to_text(html: str, base_url: str = "", *, markdown: bool = True) -> tuple[str, str]:
    """(title, body) of an HTML page: Markdown when ``markdown``, else plain text."""
    parser = _Converter(base_url, markdown)
    parser.feed(html)
    parser.close()
    body = "".join(parser.out)
    lines = [line.rstrip() for line in body.split("\n")]
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    if markdown:
        text = re.sub(r"\[\s*\]\([^)]*\)", "", text)  # a link around nothing (an icon)
    title = _SPACES.sub(" ", "".join(parser.title)).strip()
    return title, text
