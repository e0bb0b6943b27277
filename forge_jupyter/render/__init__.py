"""Turns and messages for a page: sanitized HTML and plain text (what a notebook keeps).

``markdown``: untrusted Markdown → sanitized HTML (markdown-it-py + nh3) ·
``record``: a turn's static record and a message's cell value · ``numbers``: durations, money,
tokens.
"""

from .markdown import markdown_html, sanitize_html
from .numbers import money, seconds, usage
from .record import message_html, message_text, turn_work_html, turn_work_text

__all__ = [
    "markdown_html", "message_html", "message_text", "money", "sanitize_html", "seconds",
    "turn_work_html", "turn_work_text", "usage",
]
