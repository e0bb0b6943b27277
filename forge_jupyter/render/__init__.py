"""Turns and messages for a page: sanitized HTML and plain text (what a notebook keeps).

``markdown``: untrusted Markdown → sanitized HTML (markdown-it-py + nh3) ·
``record``: a turn's static record, a message's cell value, who decided a tool call ·
``numbers``: durations, money, tokens.
"""

from ..message import register_message_html
from .markdown import markdown_html, sanitize_html
from .numbers import money, seconds, usage
from .record import decision_text, message_html, message_text, turn_work_html, turn_work_text

# A message in a cell shows as this package renders it; message.py cannot import it (ground floor).
register_message_html(message_html)

__all__ = [
    "decision_text", "markdown_html", "message_html", "message_text", "money", "sanitize_html",
    "seconds", "turn_work_html", "turn_work_text", "usage",
]
