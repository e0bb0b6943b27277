"""Every message between the kernel and the front end, declared once (docs/frontend.md).

The turn widget's custom messages and the side panel's comm ``forge.panel`` carry the same
ops: a snapshot or batch is a list of ``Op``, each a dict with an ``op`` key. They are declared
here as TypedDicts — plain dicts at run time, so a flush costs nothing more — and everything
else is derived from them: the JSON Schema (:func:`json_schema`), the TypeScript types of the
front end (``labextension/src/protocol.generated.ts``, written by
``scripts/gen_ts_protocol.py`` and checked by a test), the panel's accepted message types
(``panel_protocol.TYPES``). A message or part row is the model's own pydantic row
(``model.Message``, ``model.Part``): a new part type is a change to ``message.py`` plus its
rendering in ``labextension/src/render/view.ts``.

This module imports nothing heavy: the model's rows and pydantic are imported only when a
schema is built, so a widget still shows before the model client loads.
"""

from typing import TYPE_CHECKING, Any, Literal, NotRequired, get_args

# typing_extensions' TypedDict: pydantic reads it on Python 3.11 (typing's only from 3.12).
from typing_extensions import TypedDict

# the cell tools' messages, declared there and named in the unions below
from .ops_cells import (  # noqa: F401
    CellEdit,
    CellEdited,
    CellOutputs,
    CellReviewed,
    CellsReverted,
    EditCell,
    RevertCells,
    Review,
)
from .ops_mentions import Complete, Completion, Completions, PanelImage  # noqa: F401

if TYPE_CHECKING:  # resolved by _resolve() when a schema is built
    from ..message import Message, Part

PROTOCOL = 1  # the kernel ↔ front-end protocol; bumped on incompatible changes

ApprovalAnswer = Literal["once", "session", "deny"]
QuestionAnswer = Literal["answered", "unanswered"]  # the question tool's card, once over

# -- the ops of a snapshot or batch (kernel → view, kernel → panel) -------------------------


class StatusOp(TypedDict):
    """The session's status: busy, idle, retry ({attempt, wait}), compacting, loading
    ({message}: the model client is still loading)."""

    op: Literal["status"]
    status: str
    detail: dict[str, Any]


class NoticeOp(TypedDict):
    op: Literal["notice"]
    message: str
    level: str  # info, warning


class MessageOp(TypedDict):
    """A message's latest row (without its parts)."""

    op: Literal["message"]
    message: "Message"  # the model's row, resolved when a schema is built


class PartOp(TypedDict):
    """A part's latest row; it replaces what earlier deltas built."""

    op: Literal["part"]
    part: "Part"


class DeltaOp(TypedDict):
    """Streamed text appended to ``field`` of part ``id`` since its last row."""

    op: Literal["delta"]
    id: str
    message_id: str | None
    field: str
    text: str


class OutputOp(TypedDict):
    """Live output of a running tool call (part ``id``)."""

    op: Literal["output"]
    id: str
    stream: str
    text: str


class DisplayOp(TypedDict):
    """A rich display (a MIME bundle) a tool call showed."""

    op: Literal["display"]
    id: str
    data: dict[str, Any]


class ApprovalRequest(TypedDict):
    """A tool call waiting for a person's permission."""

    id: str
    part_id: str
    tool: str
    input: dict[str, Any]
    rule: str | None


class QuestionRequest(TypedDict):
    """The question tool's question; it travels as an approval of kind "question"."""

    id: str
    part_id: str
    tool: Literal["question"]
    kind: Literal["question"]
    question: str
    options: list[str]


class ApprovalOp(TypedDict):
    op: Literal["approval"]
    request: ApprovalRequest | QuestionRequest


class AnsweredOp(TypedDict):
    """An approval or question answered (``id`` is its request's)."""

    op: Literal["answered"]
    id: str
    answer: ApprovalAnswer | QuestionAnswer
    reason: str | None
    text: NotRequired[str | None]  # a question's answer
    by: NotRequired[str]  # who answered a question: widget, panel, user, forge


class DecisionOp(TypedDict):
    """Who allowed or denied tool call ``id`` (a person, a rule, forge), and why."""

    op: Literal["decision"]
    id: str
    answer: str | None
    by: str | None
    rule: NotRequired[str | None]
    reason: str | None


class DoneOp(TypedDict):
    """The turn is over."""

    op: Literal["done"]


Op = (StatusOp | NoticeOp | MessageOp | PartOp | DeltaOp | OutputOp | DisplayOp | ApprovalOp
      | AnsweredOp | DecisionOp | DoneOp)

# -- the turn widget's custom messages ------------------------------------------------------


class Snapshot(TypedDict):
    """Everything the turn showed so far; answers a view's ready or hello."""

    kind: Literal["snapshot"]
    seq: int
    ops: list[Op]


class Batch(TypedDict):
    """What changed since the last flush; ``seq`` follows the previous message's."""

    kind: Literal["batch"]
    seq: int
    ops: list[Op]


class Code(TypedDict):
    """The standalone renderer, for a bootstrap without the labextension (or why not)."""

    kind: Literal["code"]
    esm: NotRequired[str]
    css: NotRequired[str]
    error: NotRequired[str]


WidgetMessage = Snapshot | Batch | Code


class Ready(TypedDict):
    """The view rendered: send a snapshot."""

    type: Literal["ready"]
    protocol: int


class Hello(TypedDict):
    """Send a snapshot again (a batch was missed); also the panel's first message."""

    type: Literal["hello"]


class Stop(TypedDict):
    """The view's Stop button."""

    type: Literal["stop"]


class Approve(TypedDict):
    type: Literal["approve"]
    request_id: str
    answer: ApprovalAnswer
    reason: str | None


class Answer(TypedDict):
    """An answer to the question tool."""

    type: Literal["answer"]
    request_id: str
    text: str


class AskCode(TypedDict):
    """The bootstrap asks for the renderer (static/widget_boot.js)."""

    type: Literal["code"]


ViewMessage = Ready | Hello | Stop | Approve | Answer | AskCode

# -- the side panel's comm forge.panel ------------------------------------------------------


class Info(TypedDict):
    """What the panel's header and pickers show, and the turns running now."""

    kind: Literal["info"]
    protocol: int
    tenant: str
    model: str
    agent: str
    models: list[str]
    agents: list[str]
    session_id: str
    notebook: str
    live: list[str]


class Turn(TypedDict):
    """A turn's snapshot, when it starts or the panel says hello."""

    kind: Literal["turn"]
    turn_id: str
    session_id: str
    origin: str  # cell, panel
    prompt: str
    seq: int
    ops: list[Op]


class TurnBatch(TypedDict):
    kind: Literal["batch"]
    turn_id: str
    session_id: str
    seq: int
    ops: list[Op]


class TurnEnd(TypedDict):
    kind: Literal["turn-end"]
    turn_id: str
    session_id: str


class PanelNotice(TypedDict):
    kind: Literal["notice"]
    message: str
    level: str


class ReadCells(TypedDict):
    """The kernel asks for the notebook's cells as the page holds them (notebook_read): the
    page answers with ``cells``, each output's data cut to ``max_chars`` characters. With
    ``image_ids`` it answers with those cells only, their raster images (``image/*`` but SVG)
    cut to ``image_chars`` instead: the images a read shows a vision model, fetched whole."""

    kind: Literal["read-cells"]
    request_id: str
    max_chars: int
    image_ids: NotRequired[list[str]]
    image_chars: NotRequired[int]


PanelMessage = (Info | Turn | TurnBatch | TurnEnd | PanelNotice | ReadCells | Completions | EditCell
                | CellOutputs | RevertCells)


class PanelStop(TypedDict):
    """Stop the run of a session or a turn (one of the two may be "")."""

    type: Literal["stop"]
    session_id: str
    turn_id: str


class Cells(TypedDict):
    """The page's answer to ``read-cells``: the cells as nbformat JSON (untrusted input)."""

    type: Literal["cells"]
    request_id: str
    cells: list[dict[str, Any]]


PanelCommand = (Hello | Approve | Answer | PanelStop | Cells | Complete | PanelImage | CellEdited
                | CellReviewed | CellsReverted)

# The unions the schema and the TypeScript name (with model.Part); adapter() validates each.
ROOTS: dict[str, Any] = {"Op": Op, "WidgetMessage": WidgetMessage, "ViewMessage": ViewMessage,
                         "PanelMessage": PanelMessage, "PanelCommand": PanelCommand}


def literals(union: Any, key: str) -> tuple[str, ...]:
    """The values of ``key`` across a union of TypedDicts: the message types it names."""
    return tuple(get_args(member.__annotations__[key])[0] for member in get_args(union))


def _typed_dicts() -> list[type]:
    return [v for v in globals().values()
            if isinstance(v, type) and issubclass(v, dict) and hasattr(v, "__required_keys__")]


def _resolve() -> None:
    """Make the rows' names resolvable and every message exact (no keys beyond its own)."""
    from .. import message as model

    globals().setdefault("Message", model.Message)
    globals().setdefault("Part", model.Part)
    for cls in _typed_dicts():
        cls.__pydantic_config__ = {"extra": "forbid"}  # type: ignore[attr-defined]


def adapter(root: str = "Op") -> Any:
    """A pydantic TypeAdapter of one root (tests validate what the kernel sends with it)."""
    from pydantic import TypeAdapter

    _resolve()
    return TypeAdapter(ROOTS[root])


def json_schema() -> dict[str, Any]:
    """One JSON Schema document: each root and every type they use, under ``$defs``, as the
    kernel sends them (a row's fields with defaults are always there: rows are dumped whole)."""
    from pydantic import TypeAdapter
    from pydantic.json_schema import GenerateJsonSchema

    from .. import message as model

    class AsSent(GenerateJsonSchema):
        def field_is_required(self, field: Any, total: bool) -> bool:
            if self.mode == "serialization" and field["type"] == "model-field":
                return field.get("serialization_exclude_if") is None
            return super().field_is_required(field, total)

    _resolve()
    defs: dict[str, Any] = {}
    roots: dict[str, Any] = {}
    for name, union in {"Part": model.Part, **ROOTS}.items():
        schema = TypeAdapter(union).json_schema(mode="serialization", schema_generator=AsSent,
                                                ref_template="#/$defs/{model}")
        defs.update(schema.pop("$defs", {}))
        schema.pop("title", None)
        roots[name] = schema
    defs.update(roots)

    def named(node: Any) -> Any:  # a union declared as a root is referred to by its name
        if isinstance(node, dict):
            bare = {k: v for k, v in node.items() if k != "title"}
            for name, root in roots.items():
                if bare == root and node is not root:
                    return {"$ref": f"#/$defs/{name}"}
            return {k: named(v) for k, v in node.items()}
        if isinstance(node, list):
            return [named(v) for v in node]
        return node

    defs = {k: (v if k in roots else named(v)) for k, v in defs.items()}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "forge-jupyter kernel ↔ front end", "$defs": dict(sorted(defs.items()))}
