"""Message and Part: the ground floor every other layer speaks (DESIGN §2).

A Message is the envelope (role, parent, model, status, usage, cost); Parts are the paragraphs
and attachments inside it, ordered by their time-sortable ids. Every type has a stable JSON
form (``to_json`` / ``part_from_json``) that the store, the export format and the bus share.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from .amounts import money
from .ids import new_id
from .metadata_facts import KeptImage, PatchFile, ReplayedCall, ReplayMark, changes_in, changes_json

MessageStatus = Literal["running", "completed", "error", "aborted", "interrupted"]
TERMINAL_STATUSES: frozenset[str] = frozenset({"completed", "error", "aborted", "interrupted"})
ToolState = Literal["pending", "running", "completed", "error"]
TERMINAL_TOOL_STATES: frozenset[str] = frozenset({"completed", "error"})


def now() -> float:
    """Wall-clock seconds since the epoch (UTC); the store keeps them as timestamps."""
    return round(time.time(), 6)  # microseconds: what SQL timestamps keep, so rows round-trip


# What a person reads for a message that did not complete: the record, the text stream, the
# cell value. The widget's front end reads it from labextension/src/protocol.generated.ts, which
# scripts/gen_ts_protocol.py writes from this dict.
STATUS_WORDS: dict[str, str] = {"error": "Error", "aborted": "Stopped", "interrupted": "Interrupted"}


def duration(part: Any) -> float | None:
    """Seconds from a part's start to its end — a Part or its JSON row — None while it is open
    or for a part without times."""
    if isinstance(part, dict):
        start, end = part.get("time_start"), part.get("time_end")
    else:
        start, end = getattr(part, "time_start", None), getattr(part, "time_end", None)
    return None if start is None or end is None else end - start


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=False)

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class Tokens(_Row):
    input: int = 0
    output: int = 0
    reasoning: int = 0
    cache_read: int = 0
    cache_write: int = 0
    # True when the provider sent no usage and the numbers were counted locally.
    estimated: bool = False

    def add(self, other: Tokens) -> Tokens:
        return Tokens(
            input=self.input + other.input,
            output=self.output + other.output,
            reasoning=self.reasoning + other.reasoning,
            cache_read=self.cache_read + other.cache_read,
            cache_write=self.cache_write + other.cache_write,
            estimated=self.estimated or other.estimated,
        )


class ErrorInfo(_Row):
    type: str
    message: str


# ----------------------------------------------------------------------------------- parts


class _PartBase(_Row):
    id: str = Field(default_factory=lambda: new_id("part"))
    session_id: str
    message_id: str
    created_at: float = Field(default_factory=now)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @property
    def is_terminal(self) -> bool:
        """Written once and final (overridden by the streamed part types)."""
        return True


class TextPart(_PartBase):
    type: Literal["text"] = "text"
    text: str = ""
    synthetic: bool = False  # written by the harness, not the model or the person
    time_start: float | None = None
    time_end: float | None = None

    @property
    def is_terminal(self) -> bool:
        return self.time_end is not None


class ReasoningPart(_PartBase):
    type: Literal["reasoning"] = "reasoning"
    text: str = ""
    time_start: float | None = None
    time_end: float | None = None

    @property
    def is_terminal(self) -> bool:
        return self.time_end is not None


class ToolPart(_PartBase):
    """A tool call. Its state moves only through the transitions below — pending → running
    (``start``) → completed (``complete``) | error (``fail``; ``interrupt`` when closed from
    outside) — each setting the fields that state carries; a finished call never changes."""

    type: Literal["tool"] = "tool"
    call_id: str
    tool: str
    state: ToolState = "pending"
    input: dict[str, Any] = Field(default_factory=dict)
    raw_input: str | None = None  # the arguments as the model sent them, when not valid JSON
    output: str | None = None
    error: str | None = None
    title: str | None = None
    time_start: float | None = None
    time_end: float | None = None

    @property
    def is_terminal(self) -> bool:
        return self.state in TERMINAL_TOOL_STATES

    def _leave(self, to: ToolState) -> None:
        if self.is_terminal:
            raise ValueError(f"tool call {self.id} is already {self.state}; it cannot become {to}")

    def start(self, *, at: float | None = None) -> ToolPart:
        """pending → running: the call is about to run."""
        self._leave("running")
        self.state, self.time_start = "running", now() if at is None else at
        return self

    def complete(self, output: str, *, title: str | None = None,
                 metadata: dict[str, Any] | None = None, changes: Sequence[PatchFile] = (),
                 at: float | None = None) -> ToolPart:
        """→ completed, with what the model reads of the result and the files it changed."""
        self._leave("completed")
        self.state, self.output, self.title, self.time_end = "completed", output, title, now() if at is None else at
        self.metadata.update({**(metadata or {}), **changes_json(changes)})
        return self

    def fail(self, error: str, *, at: float | None = None, doom_loop: bool = False,
             **metadata: Any) -> ToolPart:
        """→ error: the call failed, or was refused before it ran (then it took no time:
        it starts and ends at once). ``doom_loop``: the same call once too often (stops the run)."""
        self._leave("error")
        self.state, self.error, self.time_end = "error", error, now() if at is None else at
        self.metadata.update({**metadata, **({"doom_loop": True} if doom_loop else {})})
        if self.time_start is None:
            self.time_start = self.time_end
        return self

    @property
    def changes(self) -> list[PatchFile]:
        """The files this call changed, one unified diff each (metadata_facts.py)."""
        return changes_in(self.metadata)

    @property
    def doom_loop(self) -> bool:
        """Refused as the same call repeated too often in a row (``metadata["doom_loop"]``)."""
        return bool(self.metadata.get("doom_loop"))

    @property
    def replayed(self) -> ReplayedCall | None:
        """What this call keeps of its recording, in a replayed turn."""
        return ReplayedCall.read(self.metadata.get("replay"))

    def interrupt(self, error: str, *, at: float | None = None) -> ToolPart:
        """→ error, closed from outside (a stop, a crashed runner); unstarted, it keeps no start."""
        self._leave("error")
        self.state, self.error, self.time_end = "error", error, now() if at is None else at
        return self


class FilePart(_PartBase):
    type: Literal["file"] = "file"
    path: str | None = None
    url: str | None = None
    mime: str = "application/octet-stream"
    filename: str | None = None
    image: KeptImage | None = None  # an image a tool showed, kept by its hash (image_files.py)


class AgentPart(_PartBase):
    type: Literal["agent"] = "agent"
    name: str


class CompactionPart(_PartBase):
    type: Literal["compaction"] = "compaction"
    auto: bool = True
    reason: str = ""
    # First message kept verbatim after the summary; None when no tail is kept.
    tail_start: str | None = None


class SubtaskPart(_PartBase):
    type: Literal["subtask"] = "subtask"
    agent: str
    prompt: str
    description: str = ""
    child_session_id: str | None = None


class StepStartPart(_PartBase):
    type: Literal["step-start"] = "step-start"
    model: str | None = None


class StepFinishPart(_PartBase):
    type: Literal["step-finish"] = "step-finish"
    reason: str | None = None  # the finish reason of this model round
    tokens: Tokens = Field(default_factory=Tokens)
    cost: float | None = 0.0  # None: the price table does not know the model
    model: str | None = None
    # Set where forge stopped the round itself, not the server: the limit it passed (the
    # output limit, the per-step output cap, the prompt's budget); tokens then estimated.
    stopped_by_forge: Literal["max_tokens", "output-cap", "budget"] | None = None


class PatchPart(_PartBase):
    type: Literal["patch"] = "patch"
    files: list[PatchFile] = Field(default_factory=list)


class RetryPart(_PartBase):
    type: Literal["retry"] = "retry"
    attempt: int
    error: str
    wait: float = 0.0  # seconds slept before the next attempt


Part = Annotated[
    TextPart
    | ReasoningPart
    | ToolPart
    | FilePart
    | AgentPart
    | CompactionPart
    | SubtaskPart
    | StepStartPart
    | StepFinishPart
    | PatchPart
    | RetryPart,
    Field(discriminator="type"),
]
# Every part type's name, read from the union above, so a new part type is never forgotten.
PART_TYPES: tuple[str, ...] = tuple(
    cls.model_fields["type"].default for cls in get_args(get_args(Part)[0]))
_part_adapter: TypeAdapter[Part] = TypeAdapter(Part)


def part_from_json(data: dict[str, Any] | str) -> Part:
    """Parse a part from its JSON form (a dict or a JSON string)."""
    if isinstance(data, str):
        return _part_adapter.validate_json(data)
    return _part_adapter.validate_python(data)


# -------------------------------------------------------------------------------- messages


def _clipped(text: str, limit: int) -> str:
    """``text`` on one line, at most ``limit`` characters (… marks the cut)."""
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1].rstrip() + "…"


class Message(_Row):
    id: str = Field(default_factory=lambda: new_id("message"))
    session_id: str
    role: Literal["user", "assistant"]
    parent_id: str | None = None  # an assistant's user message
    agent: str = "build"
    model: str | None = None
    provider: str | None = None
    status: MessageStatus = "running"
    finish: str | None = None  # stop, tool-calls, length, budget, step-limit, doom-loop, …
    summary: bool = False  # True on a compaction summary
    error: ErrorInfo | None = None
    tokens: Tokens = Field(default_factory=Tokens)
    cost: float | None = 0.0
    created_at: float = Field(default_factory=now)
    completed_at: float | None = None
    # Where a user message came from: notebook path, cell id, execution count.
    origin: dict[str, Any] | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    # A replayed turn's message: the recorded message it repeats (no model call, cost 0;
    # session/replay.py). None for a message written live.
    replay_of: str | None = None
    # The message's parts in id order. Not part of the message row; filled by reads.
    parts: list[Part] = Field(default_factory=list, exclude=True)

    @property
    def is_terminal(self) -> bool:
        return self.status in TERMINAL_STATUSES

    @property
    def text(self) -> str:
        """The text parts joined as a person reads them: a prompt without the harness's notes
        for the model (the notebook context) unless it has nothing else; an answer with its own."""
        texts = [p for p in self.parts if isinstance(p, TextPart) and p.text]
        own = [p for p in texts if not p.synthetic or self.role != "user"] or texts
        return "\n\n".join(p.text for p in own)

    @property
    def replay(self) -> ReplayMark | None:
        """What a replayed message keeps of its recording; None for a live one."""
        return ReplayMark.read(self.metadata.get("replay"))

    @property
    def tool_parts(self) -> list[ToolPart]:
        return [p for p in self.parts if isinstance(p, ToolPart)]

    def row(self) -> Message:
        """A copy without parts: what the message table holds."""
        return self.model_copy(update={"parts": []})

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        # Out[n] of a terminal and every list of messages: one line, not every field of
        # every part (the parts are one `.parts` away).
        bits = [self.role, self.status] + (["replayed"] if self.replay_of else [])
        if self.role == "assistant":
            steps = sum(1 for p in self.parts if p.type == "step-finish")
            if steps:
                bits.append(f"{steps} step{'s' if steps != 1 else ''}")
            calls: dict[str, int] = {}
            for p in self.tool_parts:
                calls[p.tool] = calls.get(p.tool, 0) + 1
            if calls:
                bits.append("tools: " + ", ".join(n if k == 1 else f"{n} ×{k}" for n, k in calls.items()))
            approx = "≈" if self.tokens.estimated else ""
            bits.append(f"{approx}{self.tokens.input:,} in · {approx}{self.tokens.output:,} out tokens")
            bits.append(money(self.cost))
        if self.error is not None:
            bits.append(f"error={_clipped(self.error.message, 80)!r}")
        return f"Message({', '.join(bits)}, text={_clipped(self.text, 100)!r})"

    def _repr_html_(self) -> str | None:
        # Model output is untrusted: JupyterLab inserts a live kernel's HTML unsanitized, so
        # this is HTML that forge_jupyter.render sanitized (markdown-it-py + nh3), not Markdown.
        # The renderer registers itself (register_message_html) when it loads, which every
        # Forge and Session does; before that, None lets the notebook show the plain repr.
        return None if _message_html is None else _message_html(self)


# The ground floor never reaches up: forge_jupyter.render, a floor above, says how a message
# looks as a cell's HTML by registering its renderer here when it is imported.
_message_html: Callable[[Message], str] | None = None


def register_message_html(render: Callable[[Message], str]) -> None:
    """Make ``render`` what ``Message._repr_html_`` returns (called by forge_jupyter.render)."""
    global _message_html
    _message_html = render


class SessionInfo(_Row):
    id: str = Field(default_factory=lambda: new_id("session"))
    name: str | None = None  # what a person calls it; unique inside a tenant
    title: str | None = None
    agent: str = "build"
    model: str | None = None
    directory: str | None = None
    parent_id: str | None = None  # the session that spawned this one as a subtask
    forked_from_session: str | None = None
    forked_from_message: str | None = None
    created_at: float = Field(default_factory=now)
    updated_at: float = Field(default_factory=now)
    metadata: dict[str, Any] = Field(default_factory=dict)


class Event(_Row):
    """An append-only record of what changed a session's shape (DESIGN §3)."""

    id: str = Field(default_factory=lambda: new_id("event"))
    session_id: str | None = None
    type: str  # compaction, fork, permission.asked, permission.answered, abort, recovery, …
    actor: str = "forge"  # who: "user", "agent", "forge", a user name
    data: dict[str, Any] = Field(default_factory=dict)
    created_at: float = Field(default_factory=now)
