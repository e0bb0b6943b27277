"""The side panel's messages for the cell tools (tools/notebook_edit.py, notebook_run.py), part
of the protocol ``ops.py`` declares (its unions name them): the kernel's ``edit-cell``, the
page's ``cell-edited`` answer, the person's ``cell-reviewed`` decision, and ``cell-outputs``;
and for "Revert to here" (session/revert.py, notebook/revert.py) the kernel's ``revert-cells``
and the page's ``cells-reverted``."""

from typing import Any, Literal, NotRequired

# typing_extensions' TypedDict: pydantic reads it on Python 3.11 (typing's only from 3.12).
from typing_extensions import TypedDict

CellEdit = Literal["insert", "edit", "delete", "move"]  # the cell tools (tools/notebook_edit.py)
Place = Literal["before", "after", "start", "end"]  # where insert and move put the cell
Review = Literal["accepted", "rejected", "edited"]  # edited: the person changed it, accepted so


class EditCell(TypedDict):
    """The kernel asks the page to change one cell of its notebook (the cell tools): the page
    applies it through JupyterLab's notebook model — so it is in the undo history and saved like
    the person's own edits — and answers ``cell-edited``. ``cell_id`` is the cell edited,
    deleted or moved; ``anchor_id`` the cell an insert or move goes ``place`` ("" with start or
    end). Unless ``auto_accept``, the change is staged for review: the page marks the cell
    (metadata ``forge_review``) until the person accepts or rejects it (``cell-reviewed``)."""

    kind: Literal["edit-cell"]
    request_id: str
    edit: CellEdit
    change_id: str
    session_id: str
    cell_id: str
    anchor_id: str
    place: Place
    cell_type: str  # code or markdown (insert); "" keeps the cell's type
    source: str
    auto_accept: bool


class CellBefore(TypedDict):
    """What was there before a change (its checkpoint, tools/checkpoint.py): the previous
    source (edit), the position (move, delete), the cell before it and the whole deleted cell
    as nbformat JSON (delete)."""

    source: NotRequired[str]
    index: NotRequired[int]
    previous: NotRequired[str]
    cell: NotRequired[dict[str, Any]]


class CellEdited(TypedDict):
    """The page's answer to ``edit-cell``: done (the cell's id and position after it, whether it
    waits for review) or not, and why (``error``, for the model to read)."""

    type: Literal["cell-edited"]
    request_id: str
    ok: bool
    error: str
    cell_id: str
    index: int
    staged: bool
    before: NotRequired[CellBefore]


class CellReviewed(TypedDict):
    """The person decided a staged change (or edited the cell, which accepts it with their
    edits): the kernel records it in the session as a ``cell.reviewed`` event."""

    type: Literal["cell-reviewed"]
    session_id: str
    change_id: str
    cell_id: str
    edit: CellEdit
    decision: Review


class CellOutputs(TypedDict):
    """The outputs of a cell notebook_run runs (cells/run.py), whole each time, while they come
    and once more at its end (``running`` false): the page makes them the cell's own outputs
    through its model (saved like any cell's) and shows the cell running meanwhile."""

    kind: Literal["cell-outputs"]
    cell_id: str
    outputs: list[dict[str, Any]]  # nbformat outputs
    running: bool


CellOutcome = Literal["restored", "already", "changed", "missing"]


class RevertStep(TypedDict):
    """One cell change to take back, newest first: ``after`` is what the agent left (the page
    leaves a cell that holds anything else), the rest its checkpoint."""

    change_id: str
    edit: CellEdit
    cell_id: str
    after: str | None
    before: str | None
    index: int  # where the change left it (move)
    from_index: int  # where it was (move, delete)
    previous: str  # the cell before a deleted one
    cell: dict[str, Any] | None  # the deleted cell, whole


class RevertCells(TypedDict):
    """The kernel asks the page to take back cell changes (the same operations as Reject)."""

    kind: Literal["revert-cells"]
    request_id: str
    steps: list[RevertStep]


class RevertOutcome(TypedDict):
    change_id: str
    outcome: CellOutcome  # already: it was as before (rejected in review, say); changed: left
    detail: str


class CellsReverted(TypedDict):
    """The page's answer to ``revert-cells``: one outcome per step, in order."""

    type: Literal["cells-reverted"]
    request_id: str
    ok: bool
    error: str
    outcomes: list[RevertOutcome]

