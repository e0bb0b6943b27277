"""Messages and turns as HTML and plain text: what a notebook keeps when the kernel is gone.

``message_html`` is a finished message's cell value (``Message._repr_html_``);
``turn_work_html`` is the static record of a turn that replaces the live widget (reasoning,
tool cards, retries, compactions, patches, step footers — everything but the answer text).

Everything here is untrusted — model text, tool names, arguments, outputs, errors, titles — and
both builders end in one ``sanitize_html`` pass over the whole document, so an escaping slip in
this file cannot reach the page either. Pure functions: no IPython.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from html import escape
from typing import Any

from ..message import (
    STATUS_WORDS,
    AgentPart,
    CompactionPart,
    FilePart,
    Message,
    PatchPart,
    ReasoningPart,
    RetryPart,
    StepFinishPart,
    SubtaskPart,
    TextPart,
    Tokens,
    ToolPart,
    duration,
)
from .fresh_mark import fresh_line
from .look import SEAM_BOTTOM, SEAM_TOP, element
from .markdown import markdown_html, sanitize_html
from .numbers import seconds, status_words, usage
from .pieces import (
    DIFF_LIMIT,
    OPEN_DIFF_LINES,
    _clip,
    code_block,
    code_span,
    details,
    footer,
    md_block,
    paragraph,
    text,
)
from .replay_mark import message_replay_line, replay_line
from .sources import sources_of
from .tool_card import _decision, _images_html, _tool_html, decision_text, tool_denied


def _status_parts(message: Message) -> tuple[str, str] | None:
    if message.status not in STATUS_WORDS:
        return None
    why = message.error.message if message.error is not None else message.status
    return status_words(message.status, why)


def _status_line(message: Message) -> str | None:
    parts = _status_parts(message)
    return "".join(parts) if parts else None


def _status_html(word: str, rest: str) -> str:
    if rest.startswith(": "):
        return f"<strong>{text(word)}:</strong> {text(rest[2:])}"
    return f"<strong>{text(word)}</strong>" + (f" {text(rest)}" if rest.strip() else "")


def _message_blocks(message: Message) -> list[str]:
    if message.role != "assistant":
        return [markdown_html(message.text) if message.text else paragraph("<em>(no text)</em>")]
    blocks = [md_block(message.text) if message.text
              else element("div", "forge-text forge-md", paragraph("<em>(no text)</em>"))]
    if sources := sources_of(message.parts):
        links = " · ".join(f'<a href="{escape(url)}" title="{escape(url)}">{text(title)}</a>'
                           for url, title in sources)
        blocks.append(element("div", "forge-sources", f"Sources: {links}"))
    if (status := _status_parts(message)) is not None:
        blocks.append(element("div", f"forge-message-error forge-{message.status}",
                              _status_html(*status), data_status=message.status))
    blocks.append(footer(usage(message.tokens, message.cost, message.model)))
    if mark := message_replay_line(message):
        blocks.append(footer(mark))
    return blocks


def message_html(message: Message) -> str:
    """A message as its cell value: the text, then a small footer (usage, status, error) —
    an answer in the widget's classes and looks, as the live view showed it."""
    body = "\n".join(_message_blocks(message))
    if message.role != "assistant":
        return sanitize_html(body)
    # No space above: the record ends where the live view's answer began (see SEAM).
    return sanitize_html(element("div", "forge-turn forge-value", body, style=SEAM_TOP), record=True)


def message_text(message: Message) -> str:
    """A message as plain text: the text, then the footer line."""
    lines = [message.text or "(no text)"]
    if message.role == "assistant":
        status = _status_line(message)
        if status is not None:
            lines.append(status)
        if sources := sources_of(message.parts):
            lines.append("Sources:\n" + "\n".join(f"- {title} <{url}>" for url, title in sources))
        lines.append(usage(message.tokens, message.cost, message.model))
        if mark := message_replay_line(message):
            lines.append(mark)
    return "\n\n".join(lines)


# ------------------------------------------------------------------------------ a turn


def _turn_parts(messages: Sequence[Message]) -> Iterable[tuple[Message, Any]]:
    """(message, part) for what the turn record shows, in order."""
    final = _final(messages)
    for m in messages:
        for p in m.parts:
            if m.role == "user" and not isinstance(p, CompactionPart):
                continue  # the prompt is the cell's own source
            if m is final and isinstance(p, (TextPart, StepFinishPart)):
                continue  # the cell's value shows the answer and its footer
            yield m, p


def _part_html(m: Message, p: Any) -> str | None:
    if isinstance(p, TextPart):
        if not p.text:
            return None
        if m.summary:
            return details("Summary of the earlier conversation", md_block(p.text),
                           classes="forge-summary-text")
        return md_block(p.text, " forge-synthetic" if p.synthetic else "")
    if isinstance(p, ReasoningPart):
        if not p.text:
            return None
        d = duration(p)
        label = f"Thought for {seconds(d)}" if d is not None else "Reasoning"
        return details(label, element("div", "forge-md forge-reasoning-body", markdown_html(p.text)),
                       classes="forge-reasoning")
    if isinstance(p, ToolPart):
        return _tool_html(p)
    if isinstance(p, StepFinishPart):
        return footer(usage(p.tokens, p.cost, p.model))
    if isinstance(p, RetryPart):
        wait = f" · waited {seconds(p.wait)}" if p.wait else ""
        return element("div", "forge-retry", element("span", "forge-label", f"Retry {p.attempt}")
                       + f"{wait} · {text(p.error)}")
    if isinstance(p, CompactionPart):
        label = "Context compacted automatically" if p.auto else "Context compacted"
        reason = f" — {text(p.reason)}" if p.reason else ""
        return element("div", "forge-compaction", element("span", "forge-label", label) + reason)
    if isinstance(p, PatchPart):
        blocks = [details(f"Patch {f.path} +{f.additions} −{f.deletions}",
                          code_block(_clip(f.diff, DIFF_LIMIT)),
                          open=f.diff.count("\n") < OPEN_DIFF_LINES)
                  for f in p.files]
        return element("div", "forge-patch", "\n".join(blocks)) if blocks else None
    if isinstance(p, SubtaskPart):
        return element("div", "forge-subtask", element("span", "forge-label", "Subtask")
                       + f" {code_span(p.agent)} {text(p.description or p.prompt)}")
    if isinstance(p, FilePart):
        if p.image is not None:  # a chart a call showed: its card shows it, not a file line
            return None
        return element("div", "forge-file", element("span", "forge-label", "File")
                       + f" {code_span(p.filename or p.path or p.url or '')}")
    if isinstance(p, AgentPart):
        return element("div", "forge-agent-ref", code_span("@" + p.name))
    return None  # step-start


def _summary_line(messages: Sequence[Message]) -> str:
    assistants = [m for m in messages if m.role == "assistant" and not m.summary]
    tools = sum(len(m.tool_parts) for m in messages)
    bits = ["forge"]
    if len(assistants) > 1:
        bits.append(f"{len(assistants)} steps")
    if tools:
        bits.append(f"{tools} tool call{'s' if tools != 1 else ''}")
    times = [m.created_at for m in messages]
    ends = [m.completed_at for m in messages if m.completed_at is not None]
    if times and ends:
        bits.append(seconds(max(ends) - min(times)))
    if len(assistants) > 1:
        total = Tokens()
        cost: float | None = 0.0
        for m in assistants:
            total = total.add(m.tokens)
            cost = None if cost is None or m.cost is None else cost + m.cost
        bits.append(f"total {usage(total, cost, None)}")
    return " · ".join(bits)


def turn_work_html(messages: Sequence[Message],
                   displays: dict[str, Sequence[dict[str, Any]]] | None = None,
                   *, with_answer: bool = False) -> str:
    """The static record of a turn: its work, without the final answer text.

    ``displays``: images tools showed during the turn (part id → MIME bundles), placed after
    their tool's card. ``with_answer``: end with the final message too (when no cell value
    shows it, as for a background run).
    """
    messages = list(messages)
    if not messages:
        return ""
    # The header where the live one said "Done": the turn in one line.
    blocks = [element("div", "forge-header", element("span", "forge-summary-line",
                                                      text(_summary_line(messages))))]
    for mark in filter(None, (fresh_line(messages), replay_line(messages))):
        blocks.append(paragraph(f"<strong>{text(mark)}</strong>"))
    for m, p in _turn_parts(messages):
        images = _images_html(displays.get(p.id, ())) if displays and isinstance(p, ToolPart) else None
        if html := (_tool_html(p, images) if isinstance(p, ToolPart) else _part_html(m, p)):
            blocks.append(html)
    for m in messages:  # an earlier step that failed says so where it happened
        if m.role == "assistant" and m is not messages[-1] and (s := _status_parts(m)):
            blocks.append(element("div", f"forge-message-error forge-{m.status}", _status_html(*s),
                                  data_status=m.status))
    if with_answer and (final := _final(messages)) is not None:
        blocks.extend(_message_blocks(final))
    return sanitize_html(element("div", "forge-record forge-turn", "\n" + "\n".join(blocks) + "\n",
                                 style="" if with_answer else SEAM_BOTTOM), record=True)


def _final(messages: Sequence[Message]) -> Message | None:
    return next((m for m in reversed(messages) if m.role == "assistant"), None)


def _part_text(m: Message, p: Any) -> str | None:
    if isinstance(p, TextPart):
        return p.text or None
    if isinstance(p, ReasoningPart):
        return f"[reasoning] {p.text}" if p.text else None
    if isinstance(p, ToolPart):
        if tool_denied(p):
            said = decision_text(_decision(p)) or "Denied: " + _first_line(p.error)
            return f"[{p.tool}] {said[:1].lower()}{said[1:]}"
        d = duration(p)
        line = f"[{p.tool}] {p.state}" + (f" in {seconds(d)}" if d is not None else "")
        if p.title and p.title != p.tool:
            line += f" — {p.title}"
        if p.state == "error" and p.error:
            line += f": {_first_line(p.error)}"
        return line
    if isinstance(p, StepFinishPart):
        return f"[step] {usage(p.tokens, p.cost, p.model)}"
    if isinstance(p, RetryPart):
        return f"[retry {p.attempt}] {p.error}"
    if isinstance(p, CompactionPart):
        return "[context compacted]"
    if isinstance(p, PatchPart):
        return "\n".join(f"[patch] {f.path} +{f.additions} -{f.deletions}" for f in p.files) or None
    if isinstance(p, SubtaskPart):
        return f"[subtask {p.agent}] {p.description or p.prompt}"
    return None


def _first_line(value: str | None) -> str:
    stripped = (value or "").strip()
    return stripped.splitlines()[0] if stripped else ""


def turn_work_text(messages: Sequence[Message], *, with_answer: bool = False) -> str:
    """Plain-text twin of ``turn_work_html``."""
    messages = list(messages)
    if not messages:
        return ""
    lines = [_summary_line(messages)]
    lines += filter(None, (fresh_line(messages), replay_line(messages)))
    for m, p in _turn_parts(messages):
        if t := _part_text(m, p):
            lines.append(t)
    if with_answer and (final := _final(messages)) is not None:
        lines.append(message_text(final))
    return "\n".join(lines)
