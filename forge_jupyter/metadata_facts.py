"""Facts a row keeps in its ``metadata`` JSON that forge reads back, typed on the Python side.

The JSON stays where it always was (rows and export files written by earlier versions read
back the same); `message.py` reads each through a property (``ToolPart.changes``,
``Message.replay``, ``ToolPart.replayed``) and the writers build these models, not bare dicts.
``KeptImage`` is the one typed field here (``FilePart.image``), declared beside its kin.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, ValidationError

__all__ = ["KeptImage", "PatchFile", "ReplayDivergence", "ReplayMark", "ReplayedCall", "changes_in",
           "changes_json"]


class KeptImage(BaseModel):
    # What a file part says of an image a tool showed (``FilePart.image``): kept once by
    # content (image_files.py) in the outputs of the session that wrote the part — its hash, never a path.
    # No docstring: the op protocol's generated TypeScript would carry it.
    model_config = ConfigDict(extra="forbid")

    sha256: str
    call_id: str  # the tool call that showed it; "" for an image pasted with a prompt
    width: int  # of the kept image, in pixels
    height: int


class PatchFile(BaseModel):
    # One file a tool call changed, as a unified diff (``patch -p1`` applies it). No docstring:
    # the op protocol's generated TypeScript (scripts/gen_ts_protocol.py) would carry it.
    model_config = ConfigDict(extra="forbid", validate_assignment=False)

    path: str
    diff: str
    additions: int = 0
    deletions: int = 0

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


def changes_json(files: Sequence[PatchFile]) -> dict[str, Any]:
    """The metadata keys that hold ``files``: ``"patch"`` for one (write, edit), ``"patches"``
    for several (apply_patch) — where rows and export files have always kept them."""
    dumped = [f.to_json() for f in files]
    return {} if not dumped else {"patch": dumped[0]} if len(dumped) == 1 else {"patches": dumped}


def changes_in(metadata: dict[str, Any]) -> list[PatchFile]:
    """The files a tool part's ``metadata`` says it changed (either key, as ever stored)."""
    found = [metadata.get("patch"), *(metadata.get("patches") or ())]
    return [PatchFile.model_validate(f) for f in found if isinstance(f, dict)]


class _Stored(BaseModel):
    """A fact kept in a row's ``metadata`` JSON, typed on the Python side: keys another version
    wrote are kept (``extra="allow"``) and written back only as they were set."""

    model_config = ConfigDict(extra="allow")

    @classmethod
    def read(cls, value: object) -> Self | None:
        """``value`` (what ``metadata`` holds) as this fact; None when absent, empty when unreadable."""
        if not isinstance(value, dict):
            return None
        try:
            return cls.model_validate(value)
        except ValidationError:  # an older or hand-edited row must not break a read
            return cls()

    def stored(self) -> dict[str, Any]:
        """The JSON kept in ``metadata``: only the keys that were set."""
        return self.model_dump(mode="json", exclude_unset=True)


class ReplayDivergence(_Stored):
    """The first re-run python call whose result differed from its recording."""

    part_id: str | None = None
    tool: str | None = None
    index: int | None = None
    difference: str | None = None


class ReplayMark(_Stored):
    """What a replayed message keeps of its recording (``metadata["replay"]``)."""

    original: str | None = None  # the recorded turn's canonical id
    recorded_at: float | None = None
    model: str | None = None
    session_id: str | None = None
    cell_id: str | None = None
    cell: str | None = None  # the cell in words ("cell 3 “…”")
    diverged: ReplayDivergence | None = None  # set on the message where the replay stopped


class ReplayedCall(_Stored):
    """What a replayed tool call keeps (its part's ``metadata["replay"]``)."""

    of: str | None = None  # the recorded part
    re_executed: bool | None = None  # ran again (python), else its recorded result was copied
    why: str | None = None  # why the recorded result was copied
