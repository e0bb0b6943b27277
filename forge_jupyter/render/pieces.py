"""The record's small pieces: escaped text, code, folds, footers, Markdown blocks, and the
limits of what a record keeps. Pure functions: no IPython."""

from __future__ import annotations

from html import escape

from .look import element
from .markdown import markdown_html

# Tool outputs up to this many lines and characters are shown open (the widget's
# LONG_OUTPUT_LINES and LONG_OUTPUT_CHARS, view.ts), longer ones folded.
SHORT_OUTPUT_LINES = 12
SHORT_OUTPUT_CHARS = 1_500
OUTPUT_LIMIT = 4_000  # characters of a tool output kept in the static record
ARGS_LIMIT = 2_000
DIFF_LIMIT = 20_000
OPEN_DIFF_LINES = 40


# ----------------------------------------------------------------------------- pieces


def text(value: object) -> str:
    """Untrusted text as HTML text, on one line."""
    return escape(" ".join(str(value).split()), quote=False)


def code_span(value: object) -> str:
    return f"<code>{text(value)}</code>"


def code_block(value: str) -> str:
    return f"<pre><code>{escape(value.rstrip(chr(10)), quote=False)}</code></pre>"


def details(summary: str, body: str, *, open: bool = False, classes: str = "") -> str:
    """A collapsible block; ``summary`` is plain text (escaped here), ``body`` is HTML."""
    inner = f"<summary>{text(summary)}</summary>\n{body}\n"
    if classes:
        return element("details", classes, inner, **({"open": ""} if open else {}))
    tag = "<details open>" if open else "<details>"
    return f"{tag}{inner}</details>"


def paragraph(html: str) -> str:
    return f"<p>{html}</p>"


def footer(line: str) -> str:
    """A step's footer (usage), small and faint, as the widget's."""
    return element("div", "forge-step", text(line))


def md_block(markdown: str, extra: str = "") -> str:
    """Model Markdown in the widget's text block."""
    return element("div", f"forge-text forge-md{extra}", markdown_html(markdown))


def _clip(value: str, limit: int) -> str:
    if len(value) <= limit:
        return value
    return value[:limit] + f"\n… ({len(value) - limit:,} more characters in the store)"


# ------------------------------------------------------------------------------ a message
