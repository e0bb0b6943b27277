"""Messages and Parts as Markdown and plain text: what a notebook keeps when the kernel is gone.

``message_markdown`` is a finished message's cell value (``Message._repr_markdown_``);
``turn_work_markdown`` is the static record of a turn that replaces the live widget (reasoning,
tool cards, retries, compactions, patches, step footers — everything but the answer text).

Model text stays Markdown as the model wrote it, with one change: JupyterLab renders the
outputs of a running kernel as *trusted*, and trusted Markdown output is not sanitized (its
raw HTML is inserted and its scripts run). So ``safe_markdown`` escapes raw HTML outside code
and disarms ``javascript:`` style link targets; everything built around model text is escaped
here too. Pure functions: no IPython.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from .model import (
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
)

SHORT_OUTPUT_LINES = 6  # tool outputs up to this many lines are shown open
OUTPUT_LIMIT = 4_000  # characters of a tool output kept in the static record
ARGS_LIMIT = 2_000
DIFF_LIMIT = 20_000

# ----------------------------------------------------------------------------- escaping

# Inline tags that are harmless without attributes; kept only in the middle of a line, where
# they cannot open an HTML block (which would turn the following lines into raw HTML).
_INLINE_TAG = re.compile(
    r"</?(?:b|i|em|strong|sub|sup|kbd|u|s|del|ins|mark|small|code)>|<br\s*/?>", re.IGNORECASE
)
_FENCE_OPEN = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
_PUNCT = set("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_DANGEROUS_SCHEMES = ("javascript:", "vbscript:", "data:", "file:")
_SAFE_DATA = re.compile(r"^data:image/(png|jpeg|gif|webp);", re.IGNORECASE)
_LINK_DEST = re.compile(r"(\]\(\s*)([^\s)]*(?:\([^\s)]*\)[^\s)]*)*)")
_REF_DEF = re.compile(r"^( {0,3}\[[^\]]+\]:\s*)(\S+)", re.MULTILINE)


def safe_markdown(text: str) -> str:
    """Model-written Markdown that cannot inject HTML or script when rendered as trusted."""
    out: list[str] = []
    prose: list[str] = []  # lines outside fenced code, disarmed together (links may wrap)
    fence: tuple[str, int] | None = None  # (char, length) of the open fenced code block

    def end_prose() -> None:
        if prose:
            out.append(_disarm_links("\n".join(prose)))
            prose.clear()

    for line in text.split("\n"):
        if fence is not None:
            out.append(line)
            stripped = line.strip()
            char, length = fence
            if (len(line) - len(line.lstrip(" ")) <= 3 and stripped
                    and set(stripped) == {char} and len(stripped) >= length):
                fence = None
            continue
        m = _FENCE_OPEN.match(line)
        if m and not (m.group(2)[0] == "`" and "`" in m.group(3)):
            end_prose()
            fence = (m.group(2)[0], len(m.group(2)))
            out.append(line)
            continue
        prose.append(_escape_line(line))
    end_prose()
    return "\n".join(out)


def _escape_line(line: str) -> str:
    """Escape ``<`` outside one-line code spans; keep allowed inline tags after line start."""
    res: list[str] = []
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if c == "\\" and i + 1 < n and line[i + 1] in _PUNCT:
            if line[i + 1] == "<":
                res.append("&lt;")
            else:
                res.append(line[i : i + 2])
            i += 2
            continue
        if c == "`":
            j = i
            while j < n and line[j] == "`":
                j += 1
            run = line[i:j]
            end = _closing_run(line, j, len(run))
            # Protected only when the span is sure to be one: same line, no table pipe in it.
            if end is not None and "|" not in line[j:end]:
                res.append(line[i : end + len(run)])
                i = end + len(run)
            else:
                res.append(run)
                i = j
            continue
        if c == "<":
            tag = _INLINE_TAG.match(line, i)
            if tag and line[:i].strip():
                res.append(tag.group(0))
                i = tag.end()
            else:
                res.append("&lt;")
                i += 1
            continue
        res.append(c)
        i += 1
    return "".join(res)


def _closing_run(line: str, start: int, length: int) -> int | None:
    i, n = start, len(line)
    while i < n:
        if line[i] == "`":
            j = i
            while j < n and line[j] == "`":
                j += 1
            if j - i == length:
                return i
            i = j
        else:
            i += 1
    return None


def _unsafe_url(dest: str) -> bool:
    plain = html.unescape(re.sub(r"\\(.)", r"\1", dest))
    plain = "".join(ch for ch in plain if ord(ch) > 0x20).lower()
    return plain.startswith(_DANGEROUS_SCHEMES) and not _SAFE_DATA.match(plain)


def _disarm_links(line: str) -> str:
    def link(m: re.Match[str]) -> str:
        return m.group(1) + ("#unsafe-link-removed" if _unsafe_url(m.group(2)) else m.group(2))

    line = _LINK_DEST.sub(link, line)
    return _REF_DEF.sub(link, line)


_INLINE_SPECIAL = set("\\`*_[]<>&|~!$")  # what can start markup, a tag or math mid-line


def md_escape(text: str) -> str:
    """Text that Markdown shows literally, on one line, placed after other text."""
    text = " ".join(str(text).split())
    return "".join("\\" + ch if ch in _INLINE_SPECIAL else ch for ch in text)


def code_span(text: str) -> str:
    """``text`` as an inline code span, whatever backticks it contains."""
    text = " ".join(str(text).split())
    longest = max((len(r) for r in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def code_block(text: str, lang: str = "") -> str:
    """``text`` as a fenced code block, with a fence longer than any inside it."""
    longest = max((len(r) for r in re.findall(r"`{3,}", text)), default=2)
    fence = "`" * (longest + 1)
    return f"{fence}{lang}\n{text.rstrip(chr(10))}\n{fence}"


def details(summary: str, body: str, *, open: bool = False) -> str:
    """A collapsible block; ``summary`` is plain text (escaped here), ``body`` is Markdown."""
    tag = "<details open>" if open else "<details>"
    return f"{tag}<summary>{html.escape(summary)}</summary>\n\n{body}\n\n</details>"


# ------------------------------------------------------------------------------ numbers


def seconds(value: float | None) -> str:
    if value is None:
        return ""
    if value < 1:
        return f"{max(0, round(value * 1000))} ms"
    if value < 60:
        return f"{value:.2f} s" if value < 10 else f"{value:.1f} s"
    minutes = int(value // 60)
    return f"{minutes} min {round(value - minutes * 60)} s"


def money(cost: float | None) -> str:
    if cost is None:
        return "cost unknown"
    if cost == 0:
        return "$0"
    return f"${cost:.4f}" if cost < 0.01 else f"${cost:.2f}"


def usage(tokens: Tokens, cost: float | None, model: str | None) -> str:
    """``1,234 in · 56 out · $0.0012 · model`` (≈ when the counts are estimated)."""
    approx = "≈" if tokens.estimated else ""
    bits = [f"{approx}{tokens.input:,} in", f"{approx}{tokens.output:,} out"]
    if tokens.reasoning:
        bits.append(f"{tokens.reasoning:,} reasoning")
    if tokens.cache_read:
        bits.append(f"{tokens.cache_read:,} cached")
    bits.append(money(cost))
    if model:
        bits.append(model)
    return " · ".join(bits)


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… ({len(text) - limit:,} more characters in the store)"


def _duration(part: ToolPart | ReasoningPart | TextPart) -> float | None:
    if part.time_start is None or part.time_end is None:
        return None
    return part.time_end - part.time_start


# ------------------------------------------------------------------------------ a message

_STATUS_WORDS = {"error": "Error", "aborted": "Stopped", "interrupted": "Interrupted"}


def _status_line(message: Message) -> str | None:
    if message.status not in _STATUS_WORDS:
        return None
    why = message.error.message if message.error is not None else message.status
    return f"{_STATUS_WORDS[message.status]}: {why}"


def message_markdown(message: Message) -> str:
    """A message as its cell value: the text, then a small footer (usage, status, error)."""
    body = safe_markdown(message.text) if message.text else "_(no text)_"
    if message.role != "assistant":
        return body
    blocks = [body]
    status = _status_line(message)
    if status is not None:
        word, _, why = status.partition(": ")
        blocks.append(f"**{word}:** {md_escape(why)}")
    blocks.append(f"<sub>{html.escape(usage(message.tokens, message.cost, message.model))}</sub>")
    return "\n\n".join(blocks)


def message_text(message: Message) -> str:
    """A message as plain text: the text, then the footer line."""
    lines = [message.text or "(no text)"]
    if message.role == "assistant":
        status = _status_line(message)
        if status is not None:
            lines.append(status)
        lines.append(usage(message.tokens, message.cost, message.model))
    return "\n\n".join(lines)


# ------------------------------------------------------------------------------ a turn


def _turn_parts(messages: Sequence[Message]) -> Iterable[tuple[Message, Any, bool]]:
    """(message, part, in_final) for what the turn record shows, in order."""
    final = _final(messages)
    for m in messages:
        for p in m.parts:
            if m.role == "user" and not isinstance(p, CompactionPart):
                continue  # the prompt is the cell's own source
            in_final = m is final
            if in_final and isinstance(p, (TextPart, StepFinishPart)):
                continue  # the cell's value shows the answer and its footer
            yield m, p, in_final


def _tool_markdown(p: ToolPart) -> str:
    state = {"pending": "pending", "running": "running", "completed": "completed",
             "error": "error"}[p.state]
    head = [f"**{code_span(p.tool or '(unnamed tool)')}**", state]
    if (d := _duration(p)) is not None:
        head.append(seconds(d))
    line = " · ".join(head)
    if p.title:
        line += f" — {md_escape(p.title)}"
    blocks = [line]
    args = _args_markdown(p)
    if args:
        blocks.append(args)
    if p.state == "completed" and p.output is not None:
        out = _clip(p.output or "(no output)", OUTPUT_LIMIT)
        n = (p.output or "").count("\n") + 1
        if n <= SHORT_OUTPUT_LINES:
            blocks.append(code_block(out))
        else:
            blocks.append(details(f"Output · {n:,} lines", code_block(out)))
    if p.state == "error" and p.error:
        blocks.append(code_block(_clip(p.error, OUTPUT_LIMIT)))
    return "\n\n".join(blocks)


def _args_markdown(p: ToolPart) -> str:
    if p.raw_input is not None:
        return details("Arguments (not valid JSON)", code_block(_clip(p.raw_input, ARGS_LIMIT)))
    if not p.input:
        return ""
    inline = json.dumps(p.input, ensure_ascii=False)
    if len(inline) <= 120 and "\\n" not in inline:
        return f"arguments: {code_span(inline)}"
    rows = []
    for key, value in p.input.items():
        if isinstance(value, str) and ("\n" in value or len(value) > 80):
            lang = "python" if p.tool == "python" and key == "code" else ""
            rows.append(f"{code_span(key)}\n\n{code_block(_clip(value, ARGS_LIMIT), lang)}")
        else:
            shown = json.dumps(value, ensure_ascii=False)
            rows.append(f"{code_span(key)}: {code_span(_clip(shown, ARGS_LIMIT))}")
    return details("Arguments", "\n\n".join(rows))


def _images_markdown(bundles: Sequence[dict[str, Any]]) -> str | None:
    """Images a tool showed (bus-only DisplayData), kept inline so a saved notebook has them."""
    out = []
    for b in bundles:
        for mime in ("image/png", "image/jpeg", "image/gif", "image/webp"):
            data = b.get(mime)
            if isinstance(data, str) and re.fullmatch(r"[A-Za-z0-9+/=\s]+", data):
                alt = md_escape(str(b.get("text/plain") or mime)).replace("]", "")
                out.append(f"![{alt}](data:{mime};base64,{''.join(data.split())})")
                break
    return "\n\n".join(out) or None


def _part_markdown(m: Message, p: Any) -> str | None:
    if isinstance(p, TextPart):
        if not p.text:
            return None
        if m.summary:
            return details("Summary of the earlier conversation", safe_markdown(p.text))
        return safe_markdown(p.text)
    if isinstance(p, ReasoningPart):
        if not p.text:
            return None
        d = _duration(p)
        label = f"Reasoning · {seconds(d)}" if d is not None else "Reasoning"
        return details(label, safe_markdown(p.text))
    if isinstance(p, ToolPart):
        return _tool_markdown(p)
    if isinstance(p, StepFinishPart):
        return f"<sub>{html.escape(usage(p.tokens, p.cost, p.model))}</sub>"
    if isinstance(p, RetryPart):
        wait = f" · waited {seconds(p.wait)}" if p.wait else ""
        return f"↻ **Retry {p.attempt}**{wait} · {md_escape(p.error)}"
    if isinstance(p, CompactionPart):
        how = "automatically" if p.auto else "on request"
        reason = f" — {md_escape(p.reason)}" if p.reason else ""
        return f"─── **Context compacted** {how}{reason} ───"
    if isinstance(p, PatchPart):
        blocks = []
        for f in p.files:
            summary = f"Patch {f.path} +{f.additions} −{f.deletions}"
            blocks.append(details(summary, code_block(_clip(f.diff, DIFF_LIMIT), "diff"),
                                  open=f.diff.count("\n") < 40))
        return "\n\n".join(blocks) or None
    if isinstance(p, SubtaskPart):
        return f"↳ **Subtask** {code_span(p.agent)}: {md_escape(p.description or p.prompt)}"
    if isinstance(p, FilePart):
        return f"📎 {code_span(p.filename or p.path or p.url or '')}"
    if isinstance(p, AgentPart):
        return code_span("@" + p.name)
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


def turn_work_markdown(messages: Sequence[Message],
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
    blocks = [f"<sub>{html.escape(_summary_line(messages))}</sub>"]
    for m, p, _ in _turn_parts(messages):
        md = _part_markdown(m, p)
        if md:
            blocks.append(md)
        if displays and isinstance(p, ToolPart) and (images := _images_markdown(displays.get(p.id, ()))):
            blocks.append(images)
    for m in messages:  # an earlier step that failed says so where it happened
        if m.role == "assistant" and m is not messages[-1] and (s := _status_line(m)):
            blocks.append(f"**{md_escape(s)}**")
    if with_answer and (final := _final(messages)) is not None:
        blocks.append(message_markdown(final))
    return "\n\n".join(blocks)


def _final(messages: Sequence[Message]) -> Message | None:
    return next((m for m in reversed(messages) if m.role == "assistant"), None)


def _part_text(m: Message, p: Any) -> str | None:
    if isinstance(p, TextPart):
        return p.text or None
    if isinstance(p, ReasoningPart):
        return f"[reasoning] {p.text}" if p.text else None
    if isinstance(p, ToolPart):
        d = _duration(p)
        line = f"[{p.tool}] {p.state}" + (f" in {seconds(d)}" if d is not None else "")
        if p.state == "error" and p.error:
            line += f": {p.error.strip().splitlines()[0] if p.error.strip() else ''}"
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


def turn_work_text(messages: Sequence[Message], *, with_answer: bool = False) -> str:
    """Plain-text twin of ``turn_work_markdown``."""
    messages = list(messages)
    if not messages:
        return ""
    lines = [_summary_line(messages)]
    for m, p, _ in _turn_parts(messages):
        t = _part_text(m, p)
        if t:
            lines.append(t)
    if with_answer and (final := _final(messages)) is not None:
        lines.append(message_text(final))
    return "\n".join(lines)
