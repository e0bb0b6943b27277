"""What the offline demo model reads: the conversation, the `variables` results, result tables.

Everything here is parsed from the request alone (the demo keeps no state between requests),
in either protocol: OpenAI (`tool_calls` + `role: tool`) or Anthropic (`tool_use` and
`tool_result` blocks). The texts are tool outputs, so they are read defensively: whatever does
not parse is simply not known.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
FRAME_TYPES = {"DataFrame", "Table"}  # pandas/polars DataFrame, pyarrow Table (the sql tool's)
NUMERIC_DTYPE = re.compile(r"(u?int|float|decimal|double|complex)\d*", re.IGNORECASE)


@dataclass
class ToolStep:
    """One tool call and, once it came back, its result."""

    name: str
    args: dict[str, Any]
    output: str | None = None
    error: bool = False

    @property
    def done(self) -> bool:
        return self.output is not None


@dataclass
class Frame:
    """A DataFrame of the notebook, as far as `variables` told."""

    name: str
    rows: int | None = None
    columns: list[tuple[str, str]] = field(default_factory=list)  # (name, dtype); [] if unknown

    @property
    def inspected(self) -> bool:
        return bool(self.columns)

    def is_numeric(self, column: str) -> bool:
        dtype = dict(self.columns).get(column, "")
        return bool(NUMERIC_DTYPE.match(dtype))

    @property
    def numeric(self) -> list[str]:
        return [c for c, _ in self.columns if self.is_numeric(c)]

    @property
    def other(self) -> list[str]:
        return [c for c, _ in self.columns if not self.is_numeric(c)]


@dataclass
class Conversation:
    question: str  # the last user message's text
    steps: list[ToolStep]  # the tool calls made since that message (this turn), in order
    history: list[ToolStep]  # every tool call of the conversation, in order
    tools: dict[str, dict[str, Any]]  # offered tool name → its JSON Schema parameters

    def done_this_turn(self, name: str, args: dict[str, Any]) -> ToolStep | None:
        """This turn's call of `name` with exactly `args`, if it was made."""
        for step in self.steps:
            if step.name == name and step.args == args:
                return step
        return None


def text_of(content: Any) -> str:
    """Text of a message or tool-result content: a str or a list of content blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(text_of(b.get("text", b.get("content"))) for b in content
                         if isinstance(b, dict) and b.get("type") in (None, "text", "tool_result"))
    return "" if content is None else str(content)


def _args(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw or "{}")
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _is_error(output: str, flagged: Any = False) -> bool:
    return bool(flagged) or output.startswith(("Error:", "Permission denied"))


def read_conversation(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Conversation:
    """The question, this turn's tool steps and the whole tool history of a request."""
    history: list[ToolStep] = []
    by_id: dict[str, ToolStep] = {}
    question, turn_start = "", 0

    def call(call_id: str, name: str, args: dict[str, Any]) -> None:
        step = ToolStep(name, args)
        history.append(step)
        by_id[call_id] = step

    def result(call_id: str, output: str, flagged: Any = False) -> None:
        step = by_id.get(call_id)
        if step is not None:
            step.output, step.error = output, _is_error(output, flagged)

    for m in messages:
        role, content = m.get("role"), m.get("content")
        if role == "assistant":
            for c in m.get("tool_calls") or []:  # OpenAI
                fn = c.get("function") or {}
                call(c.get("id", ""), fn.get("name", ""), _args(fn.get("arguments")))
            for b in content if isinstance(content, list) else []:  # Anthropic
                if isinstance(b, dict) and b.get("type") == "tool_use":
                    call(b.get("id", ""), b.get("name", ""), _args(b.get("input")))
        elif role == "tool":
            result(m.get("tool_call_id", ""), text_of(content))
        elif role == "user":
            asked = []
            for b in content if isinstance(content, list) else [content]:
                if isinstance(b, dict) and b.get("type") == "tool_result":
                    result(b.get("tool_use_id", ""), text_of(b.get("content")), b.get("is_error"))
                elif isinstance(b, str):
                    asked.append(b)
                elif isinstance(b, dict) and b.get("type") == "text":
                    asked.append(text_of(b.get("text")))
            if any(a.strip() for a in asked):
                question, turn_start = "\n".join(asked).strip(), len(history)
    offered = {}
    for t in tools:
        fn = t.get("function", t)
        offered[fn.get("name", "")] = fn.get("parameters") or fn.get("input_schema") or {}
    return Conversation(question, history[turn_start:], history, offered)


def string_parameter(schema: dict[str, Any], default: str) -> str:
    """A tool's main argument: its first required string property, else `default`."""
    props = schema.get("properties") or {}
    for name in [*(schema.get("required") or []), *props]:
        if (props.get(name) or {}).get("type") == "string":
            return name
    return default


# -- what `variables` said ------------------------------------------------------------------

_INSPECTED = re.compile(r"(?P<name>[A-Za-z_]\w*): DataFrame (?P<rows>[\d,]+) rows × \d+ columns")


def frames_known(history: list[ToolStep]) -> list[Frame]:
    """DataFrames that `variables` listed or inspected, least recently seen first."""
    frames: dict[str, Frame] = {}
    for step in history:
        if step.name != "variables" or not step.done or step.error:
            continue
        assert step.output is not None
        for frame in _inspected(step.output) or _listed(step.output):
            old = frames.pop(frame.name, None)
            if old is not None and not frame.inspected:
                frame = old  # a later listing does not forget the columns
            frames[frame.name] = frame
    return list(frames.values())


def _inspected(output: str) -> list[Frame]:
    lines = output.splitlines()
    match = _INSPECTED.match(lines[0]) if lines else None
    if match is None:
        return []
    frame = Frame(match["name"], int(match["rows"].replace(",", "")))
    try:
        start = lines.index("dtypes:") + 1
    except ValueError:
        return [frame]
    for line in lines[start:]:
        if not line.strip():
            break
        column, _, dtype = line.rstrip().rpartition(" ")
        if column.strip() and dtype:
            frame.columns.append((column.strip(), dtype))
    return [frame]


def _listed(output: str) -> list[Frame]:
    lines = output.splitlines()
    if not lines or lines[0].split()[:2] != ["name", "type"]:
        return []
    found = []
    for line in lines[1:]:
        cells = line.split()
        if len(cells) >= 2 and cells[1] in FRAME_TYPES and IDENTIFIER.match(cells[0]):
            rows = cells[2].split("×")[0] if len(cells) > 2 else ""
            found.append(Frame(cells[0], int(rows) if rows.isdigit() else None))
    return found


# -- result tables ----------------------------------------------------------------------------


def read_table(output: str, headers: list[str]) -> list[list[str]] | None:
    """The rows of a right-aligned text table (pandas `to_string(index=False)`, the `sql`
    tool's format) whose header line holds `headers` in order; None if it is not one."""
    lines = output.splitlines()
    at = next((i for i, line in enumerate(lines) if _header_ends(line, headers) is not None), None)
    if at is None:
        return None
    ends = _header_ends(lines[at], headers)
    assert ends is not None
    rows = []
    for line in lines[at + 1:]:
        if not line.strip():
            break
        cells, start = [], 0
        for end in ends:
            cells.append(line[start:end].strip())
            start = end
        if line[start:].strip():
            return None
        rows.append(cells)
    return rows


def _header_ends(line: str, headers: list[str]) -> list[int] | None:
    ends, pos = [], 0
    for header in headers:
        found = line.find(header, pos)
        if found < 0 or line[pos:found].strip():
            return None
        pos = found + len(header)
        ends.append(pos)
    return ends if not line[pos:].strip() else None


def total_rows(output: str) -> int | None:
    """The row count the `sql` tool reports under its table ("(4 rows)")."""
    match = re.search(r"^\((\d[\d,]*) rows?\b", output, re.MULTILINE)
    return int(match[1].replace(",", "")) if match else None


def read_pairs(output: str, header: str | None = None) -> list[tuple[str, str]]:
    """`label value` lines of a printed pandas Series (`to_string()`), up to the first blank
    line or `[image…]` note; a first line that is the index's name (`header`) is skipped."""
    pairs = []
    lines = output.splitlines()
    if lines and header is not None and lines[0].strip() == header:
        lines = lines[1:]
    for line in lines:
        if not line.strip() or line.startswith("["):
            break
        label, _, value = line.rstrip().rpartition(" ")
        if label.strip():
            pairs.append((label.strip(), value))
    return pairs
