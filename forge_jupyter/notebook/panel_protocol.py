"""The messages of the comm ``forge.panel`` (docs/api.md): what the side panel may send, checked
field by field, and the ``info`` the kernel sends it. Their shapes are declared in ``ops``.

Everything a panel sends is untrusted input from a browser page: an unknown type, a missing
or mistyped field, a huge string is turned into a ``PanelError`` whose text the panel shows
as a notice — never an exception in the kernel's message loop, never echoed back at length.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any, get_args

from ..ids import is_id
from . import ops
from .ops_cells import CellOutcome

PROTOCOL = ops.PROTOCOL  # sent in the comm's open data and in every info
TYPES = ops.literals(ops.PanelCommand, "type")  # ("hello", "approve", "answer", "stop")
ANSWERS: tuple[str, ...] = get_args(ops.ApprovalAnswer)
MAX_ID = 100  # characters of a turn id (the hub's: turn_ and 16 hex)
MAX_REASON = 2000  # characters of a deny reason (the model reads it)
MAX_ANSWER = 10_000  # characters of an answer to the question tool (session/question.py)
PROMPT_MAX = 64 * 1024  # characters of the prompt a turn message carries
_ID = re.compile(rf"[A-Za-z0-9_]{{1,{MAX_ID}}}")


class PanelError(ValueError):
    """A message from the panel that the kernel cannot act on; its text is the notice."""


@dataclass(frozen=True)
class Hello:
    pass


@dataclass(frozen=True)
class Approve:
    request_id: str
    answer: str
    reason: str | None


@dataclass(frozen=True)
class AnswerQuestion:
    request_id: str
    text: str


@dataclass(frozen=True)
class Stop:
    session_id: str
    turn_id: str


@dataclass(frozen=True)
class CellsReply:
    request_id: str
    cells: list[Any]


@dataclass(frozen=True)
class Complete:
    request_id: str
    query: str


@dataclass(frozen=True)
class PastedImage:
    image_id: str
    mime: str
    data: bytes


MAX_QUERY = 512  # characters after the @ a completion request may send
# A pasted image as it comes, before the image limits fit it (llm/images.py refuses more, too)
MAX_PASTE_BYTES = 10_000_000
PASTE_MIMES = ("image/png", "image/jpeg", "image/gif", "image/webp")
_PASTE_ID = re.compile(r"paste_[a-z0-9]{8,40}")


@dataclass(frozen=True)
class CellEditedReply:
    request_id: str
    ok: bool
    error: str
    cell_id: str
    index: int
    staged: bool
    before: dict[str, Any] = field(default_factory=dict)  # ops.CellBefore, checked


@dataclass(frozen=True)
class CellsReverted:
    request_id: str
    ok: bool
    error: str
    outcomes: list[tuple[str, str, str]]  # (change id, outcome, detail)


@dataclass(frozen=True)
class CellReviewed:
    session_id: str
    change_id: str
    cell_id: str
    edit: str
    decision: str


Command = (Hello | Approve | AnswerQuestion | Stop | CellsReply | Complete | PastedImage
           | CellEditedReply | CellReviewed | CellsReverted)
MAX_CELLS = 50_000  # cells a page's answer may hold
MAX_ERROR = 2000  # characters of a page's reason an edit failed (the model reads it)
EDITS: tuple[str, ...] = get_args(ops.CellEdit)
REVIEWS: tuple[str, ...] = get_args(ops.Review)
OUTCOMES: tuple[str, ...] = get_args(CellOutcome)
MAX_BEFORE = 1_000_000  # characters of a cell's previous source or JSON the page may send
_CELL_ID = re.compile(r"[A-Za-z0-9_-]{1,100}")  # nbformat's cell id, bounded


def _cell_id(data: dict[str, Any], key: str = "cell_id") -> str:
    value = data.get(key)
    if value in (None, ""):
        return ""
    if not isinstance(value, str) or not _CELL_ID.fullmatch(value):
        raise PanelError(f"{data['type']}: {key} is not a cell id (letters, digits, - and _; at "
                         "most 100 characters).")
    return value


def _shown(value: Any) -> str:
    """A short, safe rendering of an unexpected value for a notice."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "…"


def _id(data: dict[str, Any], key: str, *, required: bool, ours: bool = True) -> str:
    """The id under ``key``: one of forge's ids (``ids.is_id``, the check every entry uses),
    or with ``ours=False`` one the panel hub made (a turn's)."""
    value = data.get(key)
    if value is None or value == "":
        if required:
            raise PanelError(f"{data['type']} needs {key}, the id of a pending approval (apr_…) "
                             "or question (qst_…).")
        return ""
    if not isinstance(value, str):
        raise PanelError(f"{data['type']}: {key} must be a string, not {type(value).__name__}.")
    if not (is_id(value) if ours else _ID.fullmatch(value)):
        raise PanelError(f"{data['type']}: {key} is not an id (a prefix such as ses_, then "
                         f"letters and digits; at most {MAX_ID} characters).")
    return value


def parse(data: Any) -> Command:
    """The panel's message as a command; ``PanelError`` says what is wrong with it."""
    if not isinstance(data, dict):
        raise PanelError(f"a panel message is a JSON object with a type, not {_shown(data)}.")
    kind = data.get("type")
    if kind not in TYPES:  # exact: no case folding, no trimming of what a panel sends
        raise PanelError(f"unknown panel message type {_shown(kind)}; the kernel understands "
                         f"{', '.join(TYPES)}. Reload the page if the extension was updated.")
    if kind == "hello":
        return Hello()
    if kind == "approve":
        request_id = _id(data, "request_id", required=True)
        answer = data.get("answer")
        if answer not in ANSWERS:
            raise PanelError(f"approve: answer must be one of {', '.join(ANSWERS)}, not {_shown(answer)}.")
        reason = data.get("reason")
        if reason is not None and not isinstance(reason, str):
            raise PanelError(f"approve: reason must be a string, not {type(reason).__name__}.")
        if reason is not None and len(reason) > MAX_REASON:
            raise PanelError(f"approve: the reason is {len(reason):,} characters; keep it under "
                             f"{MAX_REASON:,}.")
        return Approve(request_id, answer, (reason.strip() or None) if reason else None)
    if kind == "answer":
        request_id = _id(data, "request_id", required=True)
        text = data.get("text")
        if not isinstance(text, str):
            raise PanelError(f"answer: text must be a string, not {type(text).__name__}.")
        if len(text) > MAX_ANSWER:
            raise PanelError(f"answer: the answer is {len(text):,} characters; keep it under "
                             f"{MAX_ANSWER:,}.")
        if not text.strip():
            raise PanelError("answer: the answer is empty; type an answer or pick an option.")
        return AnswerQuestion(request_id, text)
    if kind == "cells":
        request_id = _id(data, "request_id", required=True, ours=False)
        cells = data.get("cells")
        if not isinstance(cells, list) or len(cells) > MAX_CELLS:
            raise PanelError(f"cells: cells must be a list of at most {MAX_CELLS:,} cells.")
        return CellsReply(request_id, cells)
    if kind == "complete":
        request_id = _id(data, "request_id", required=True, ours=False)
        query = data.get("query")
        if not isinstance(query, str) or len(query) > MAX_QUERY:
            raise PanelError(f"complete: query must be a string of at most {MAX_QUERY} characters.")
        return Complete(request_id, query)
    if kind == "image":
        return _image(data)
    if kind == "cell-edited":
        request_id = _id(data, "request_id", required=True, ours=False)
        error, index = data.get("error", ""), data.get("index", -1)
        if not isinstance(error, str) or not isinstance(index, int) or isinstance(index, bool):
            raise PanelError("cell-edited: error must be a string and index an integer.")
        return CellEditedReply(request_id, data.get("ok") is True, error[:MAX_ERROR],
                               _cell_id(data), index, data.get("staged") is True,
                               _before(data.get("before")))
    if kind == "cells-reverted":
        return _reverted(data)
    if kind == "cell-reviewed":
        session_id = _id(data, "session_id", required=True)
        change_id = _id(data, "change_id", required=True, ours=False)
        edit, decision = data.get("edit"), data.get("decision")
        if edit not in EDITS or decision not in REVIEWS:
            raise PanelError(f"cell-reviewed: edit is one of {', '.join(EDITS)} and decision one "
                             f"of {', '.join(REVIEWS)}, not {_shown(edit)} and {_shown(decision)}.")
        return CellReviewed(session_id, change_id, _cell_id(data), edit, decision)
    session_id = _id(data, "session_id", required=False)
    turn_id = _id(data, "turn_id", required=False, ours=False)
    if not session_id and not turn_id:
        raise PanelError("stop needs the session_id (or turn_id) of the run to stop.")
    return Stop(session_id, turn_id)


def _image(data: dict[str, Any]) -> PastedImage:
    import base64
    import binascii

    image_id, mime, encoded = data.get("image_id"), data.get("mime"), data.get("data")
    if not isinstance(image_id, str) or not _PASTE_ID.fullmatch(image_id):
        raise PanelError("image: image_id must be paste_ and 8 to 40 lowercase letters or digits.")
    if mime not in PASTE_MIMES:
        raise PanelError(f"image: {_shown(mime)} is not an image the box takes; paste a "
                         f"{', '.join(m.split('/')[1].upper() for m in PASTE_MIMES)}.")
    if not isinstance(encoded, str) or len(encoded) > (MAX_PASTE_BYTES + 2) // 3 * 4:
        raise PanelError(f"image: the image is over {MAX_PASTE_BYTES // 1_000_000} MB; paste a "
                         "smaller one (forge scales it down anyway).")
    try:
        raw = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise PanelError("image: data is not base64.") from None
    return PastedImage(image_id, mime, raw)


# -- info ------------------------------------------------------------------------------------


def built_forge(controller: Any) -> Any:
    """The notebook's Forge as it is, or None: the panel never builds it (the warm-up or the
    first cell does) nor rebuilds it after a store setting changed (the next cell does)."""
    return getattr(controller, "_forge", None) if controller is not None else None


def default_model(config: Any) -> str:
    """The model a prompt without ``-m`` uses, as far as the kernel knows without probing:
    the configured one, else the first provider key's default; "" when it is left to the
    first prompt (a local Ollama, else the offline demo model: model_choice.resolve)."""
    from ..model_choice import PROVIDER_DEFAULTS

    if getattr(config, "model", None):
        return str(config.model)
    for var, model in PROVIDER_DEFAULTS:
        if os.environ.get(var):
            return model
    return ""


def info(controller: Any, live: list[str]) -> ops.Info:
    """What the panel's header and pickers show: tenant, model and agent (current and
    choices), the notebook's current session, the turns running now."""
    # Imported here, not at %load_ext (which must stay fast): a panel asks after that.
    from ..agents import BUILTIN_AGENTS
    from ..model_choice import DEMO_MODEL, PROVIDER_DEFAULTS

    config = controller.config
    model = default_model(config)
    models = [model] if model else []
    models += [m for var, m in PROVIDER_DEFAULTS if os.environ.get(var) and m not in models]
    if not models:
        models = [DEMO_MODEL]
    # The Forge's agents when it is built (agents can be added there); the builtin ones before.
    forge = built_forge(controller)
    agents = sorted(forge.agents.agents) if forge is not None else sorted(BUILTIN_AGENTS)
    return {"kind": "info", "protocol": PROTOCOL, "tenant": str(config.tenant), "model": model,
            "agent": str(config.agent), "models": models, "agents": agents,
            "session_id": controller.current_session_id or "",
            "notebook": controller.notebook_path or "", "live": list(live)}


def completions(request_id: str, query: str, controller: Any) -> ops.Completions:
    """What the box may offer after ``@query`` (mentions/complete.py)."""
    from .mentions.complete import candidates

    shell = getattr(controller, "shell", None)
    namespace = getattr(shell, "user_ns", None) or {}
    forge = built_forge(controller)
    root = getattr(forge, "root", None) or os.getcwd()
    items = candidates(query, namespace, getattr(controller, "run_log", None), root)
    return {"kind": "completions", "request_id": request_id, "query": query,
            "items": [{"insert": i.insert, "detail": i.detail} for i in items]}


def notice(message: str, level: str = "warning") -> ops.PanelNotice:
    return {"kind": "notice", "message": message, "level": level}


def _before(value: Any) -> dict[str, Any]:
    """A page's ``before`` (ops.CellBefore): what does not fit its shape is left out."""
    if not isinstance(value, dict):
        return {}
    out: dict[str, Any] = {}
    if isinstance(value.get("source"), str) and len(value["source"]) <= MAX_BEFORE:
        out["source"] = value["source"]
    index = value.get("index")
    if isinstance(index, int) and not isinstance(index, bool) and 0 <= index <= MAX_CELLS:
        out["index"] = index
    previous = value.get("previous")
    if isinstance(previous, str) and _CELL_ID.fullmatch(previous):
        out["previous"] = previous
    cell = value.get("cell")
    if isinstance(cell, dict) and cell.get("cell_type") in ("code", "markdown", "raw"):
        import json

        if len(json.dumps(cell, default=str)) <= MAX_BEFORE:
            out["cell"] = cell
    return out


def _reverted(data: dict[str, Any]) -> CellsReverted:
    request_id = _id(data, "request_id", required=True, ours=False)
    error, outcomes = data.get("error", ""), data.get("outcomes", [])
    if not isinstance(error, str) or not isinstance(outcomes, list) or len(outcomes) > MAX_CELLS:
        raise PanelError("cells-reverted: error must be a string and outcomes a list.")
    out = []
    for o in outcomes:
        if not isinstance(o, dict) or o.get("outcome") not in OUTCOMES:
            raise PanelError(f"cells-reverted: each outcome is one of {', '.join(OUTCOMES)}.")
        change_id = _id(o | {"type": "cells-reverted"}, "change_id", required=True, ours=False)
        detail = o.get("detail") if isinstance(o.get("detail"), str) else ""
        out.append((change_id, o["outcome"], detail[:MAX_ERROR]))
    return CellsReverted(request_id, data.get("ok") is True, error[:MAX_ERROR], out)
