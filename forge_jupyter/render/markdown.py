"""Untrusted Markdown → HTML that cannot run anything: markdown-it-py parses, nh3 sanitizes.

A running kernel's outputs are *trusted* in JupyterLab: their HTML is inserted unsanitized and
their scripts run; trusted Markdown is put through a string-level LaTeX pass and marked, then
inserted unsanitized too. So forge never hands JupyterLab Markdown to interpret. Model text is
parsed here by markdown-it-py (CommonMark + tables + strikethrough; every link, image, autolink
and reference definition, in any container, goes through ``link_allowed``), and the HTML it
yields — raw HTML the model wrote included — is re-parsed and re-serialized by nh3 (ammonia on
html5ever) against an allowlist of tags, attributes, classes and URL schemes: the policy of the
live widget's marked + DOMPurify (labextension/src/render/markdown.ts), so a turn looks the same live and
in its record.
"""

from __future__ import annotations

import re
from functools import cache
from html import escape
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import nh3
    from markdown_it import MarkdownIt

# Links may point at the web, at mail, or inside the notebook's server (relative, #anchor).
LINK_SCHEMES = frozenset({"http", "https", "mailto"})
# Only inline raster images load; a remote image would send data out when the record renders,
# and an SVG can carry script. Anything else becomes a link (http/https) or plain text.
SAFE_IMAGE = re.compile(r"data:image/(?:png|jpeg|gif|webp);base64,[A-Za-z0-9+/=]*\Z", re.IGNORECASE)
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
# What a browser ignores when it reads a URL (WHATWG URL: leading/trailing C0 controls and
# spaces are stripped, tabs and newlines removed anywhere).
_URL_IGNORED = re.compile(r"[\t\n\r]")

# No script, style, form, frame, object, embed, svg, math, template or noscript: neither the
# elements nor their namespaces (where mutation XSS lives) are ever in a record.
TAGS = frozenset({
    "a", "abbr", "b", "blockquote", "br", "caption", "code", "dd", "del", "details", "div", "dl",
    "dt", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "ins", "kbd", "li", "mark",
    "ol", "p", "pre", "q", "s", "samp", "small", "span", "strong", "sub", "summary", "sup",
    "table", "tbody", "td", "tfoot", "th", "thead", "tr", "u", "ul", "var",
})
ATTRIBUTES = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title"},
    "ol": {"start"},
    "th": {"style"},  # text-align only (filter_style_properties)
    "td": {"style"},
    "details": {"open"},
}
# The record's own elements (built in record.py, never from model text) also carry the live
# widget's classes and their looks inline (look.py): what the record cleaner adds to these.
RECORD_ATTRIBUTES = {"div": {"style", "data-state", "data-tool", "data-status"},
                     "span": {"style", "title"}, "details": {"style"},
                     "strong": {"style"}, "pre": {"style"}}


def url_scheme(url: str) -> str | None:
    """The scheme a browser would read from ``url`` (lower case), None for a relative URL."""
    plain = _URL_IGNORED.sub("", url).strip("".join(map(chr, range(0x21))))
    m = _SCHEME.match(plain)
    return m.group(1).lower() if m else None


def link_allowed(url: str) -> bool:
    """http, https, mailto, or relative (a path, ``#anchor`` or ``?query``)."""
    scheme = url_scheme(url)
    return scheme is None or scheme in LINK_SCHEMES


def image_allowed(url: str) -> bool:
    return bool(SAFE_IMAGE.match(url.strip()))


def _attribute_filter(tag: str, attr: str, value: str) -> str | None:
    """nh3's last word on every attribute: ammonia has already checked URL schemes against
    LINK_SCHEMES + data, and this narrows data: to raster images in ``<img src>``."""
    if tag == "img" and attr == "src":
        return value if image_allowed(value) else None
    if attr == "href" and not link_allowed(value):
        return None
    return value


@cache
def _cleaner(record: bool = False) -> nh3.Cleaner:
    """Model text: no classes, no styles but a table cell's alignment. ``record``: the record's
    frame as well — the widget's classes and look.py's style properties."""
    import nh3

    from .look import CLASSES, PROPERTIES, TAGS_WITH_CLASSES

    attributes = {k: set(v) for k, v in ATTRIBUTES.items()}
    classes: dict[str, set[str]] = {}
    properties = {"text-align"}
    if record:
        for tag, extra in RECORD_ATTRIBUTES.items():
            attributes.setdefault(tag, set()).update(extra)
        classes = {tag: set(CLASSES) for tag in TAGS_WITH_CLASSES}
        properties |= PROPERTIES
    return nh3.Cleaner(
        tags=set(TAGS),
        clean_content_tags={"script", "style"},  # dropped with their content, not shown as text
        attributes=attributes,
        allowed_classes=classes,
        url_schemes=set(LINK_SCHEMES | {"data"}),
        attribute_filter=_attribute_filter,
        filter_style_properties=properties,
        set_tag_attribute_values={"a": {"target": "_blank"}},
        link_rel="noopener noreferrer",
        strip_comments=True,
    )


def sanitize_html(html: str, *, record: bool = False) -> str:
    """``html`` re-parsed and re-serialized with only the allowlisted tags, attributes and URLs
    (``record``: and the record frame's classes and styles)."""
    return _cleaner(record).clean(html)


def _validate_link(url: str) -> bool:
    # markdown-it asks this of every link, image, autolink and reference definition (in any
    # container: blockquote, list item, nested), after decoding entities and escapes. An image's
    # data: source passes here; the image renderer and nh3 keep it on <img> only.
    return link_allowed(url) or image_allowed(url)


def _render_link_open(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    # Also a data: image address, which _validate_link lets through for images only.
    token = tokens[idx]
    if not link_allowed(token.attrGet("href") or ""):
        token.attrs.pop("href", None)
    return self.renderToken(tokens, idx, options, env)


def _render_image(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    """Inline raster images show; a remote image becomes a link to it; anything else, text."""
    token = tokens[idx]
    alt = self.renderInlineAsText(token.children or [], options, env)
    src = token.attrGet("src") or ""
    if image_allowed(src):
        return f'<img src="{escape(src)}" alt="{escape(alt)}">'
    label = escape(f"[image: {alt or src or '(no address)'}]")
    if url_scheme(src) in ("http", "https"):
        return (f'<a href="{escape(src)}" title="Remote images in model output are not loaded; '
                f'open it yourself if you trust it">{label}</a>')
    return label


def _render_math(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    """TeX stays text between its dollars, for JupyterLab's MathJax to typeset on the page.

    Parsed as math first so that Markdown does not eat its backslashes, stars and underscores;
    what MathJax makes of it is checked in the browser test (\\href makes no link there)."""
    token = tokens[idx]
    if token.type == "math_inline":
        return escape(f"${token.content}$", quote=False)
    tex = escape(f"$${token.content.strip()}$$", quote=False)
    if token.type == "math_inline_double":
        return tex
    label = f" ({escape(token.info, quote=False)})" if token.type == "math_block_label" else ""
    return f"<p>{tex}{label}</p>\n"


@cache
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt
    from mdit_py_plugins.dollarmath import dollarmath_plugin

    # Raw HTML on, as in the widget (<br> in a table cell, <kbd>, <sub> read as meant): nh3
    # decides what of it survives.
    md = MarkdownIt("commonmark", {"html": True, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    # Pandoc's rule ($ hugging its TeX, no digit after the closing one), so "$5 and $10" stays
    # prose; math rendered by _render_math, not by the plugin's classed spans.
    md.use(dollarmath_plugin, allow_space=False, allow_digits=False, double_inline=True)
    for rule in ("math_inline", "math_inline_double", "math_block", "math_block_label"):
        md.add_render_rule(rule, _render_math)
    md.validateLink = _validate_link  # type: ignore[method-assign]
    md.add_render_rule("link_open", _render_link_open)
    md.add_render_rule("image", _render_image)
    return md


def markdown_html(text: str) -> str:
    """Model Markdown as sanitized HTML, safe to insert into a trusted page. Sanitizing each
    piece also balances its tags, so an unclosed ``<details>`` cannot swallow what follows."""
    return sanitize_html(_parser().render(text))
