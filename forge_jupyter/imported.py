"""Rows from outside — a session file (``import_session``), a notebook's exported turns
(``import_notebook_turns``) — are data, never authority.

Such a file may have been written by anyone, so before a row is written here:

- every id it holds is checked against the id grammar (``ids.check_id``): an id later names a
  folder (the session's saved outputs), and ``../../x`` must never reach that far; a kept
  image's name likewise (``image_files.image_path``: a hash and a type, nothing else);
- what granted something where the row was made is dropped: "allow for this session" answers
  and the session's own permission rules (its metadata), the decision and approval a tool call
  carries (a replay would take "approved for the session" as its answer), and the agent the
  session names (it would pick one of this person's agents, with their permissions): approvals
  belong to the person and the machine where they were given, not to the portable row;
- the session's directory — the file tools' root — becomes this Forge's root;
- an event that acts when read back (a checkpoint "Revert to here" would write into a file or
  a cell) is kept as a record under another type (``ACTING_EVENTS``).

``trusted_directory`` is the same rule for any row read back from a store: a stored directory
outside the Forge's root is not trusted as a root.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from . import image_files
from .errors import InvalidOption
from .ids import check_id
from .message import Event, FilePart, Message, Part, SessionInfo, SubtaskPart
from .tools.checkpoint import CELL_EVENT, FILE_EVENT

# Session metadata that grants: "allow for this session" answers (permission_gate.py) and the
# session layer of permission rules (session/turn.py).
SESSION_GRANTS = ("grants", "permissions")
# What a tool call keeps of the decision on it (permission_gate.decided, the approval's id).
PART_GRANTS = ("decision", "approval")


@dataclass(frozen=True)
class Importer:
    """Where an imported session lands: this Forge's root and its default agent."""

    root: str
    agent: str


def _check(where: str, kind: str, value: str | None) -> None:
    if value is not None:
        check_id(value, kind, where=where)


def session_row(info: SessionInfo, importer: Importer) -> SessionInfo:
    """``info`` with its ids checked, its grants and agent dropped, its root this Forge's."""
    check_id(info.id, "session", where="session.id")
    _check("session.parent_id", "session", info.parent_id)
    _check("session.forked_from_session", "session", info.forked_from_session)
    _check("session.forked_from_message", "message", info.forked_from_message)
    metadata = {k: v for k, v in info.metadata.items() if k not in SESSION_GRANTS}
    return info.model_copy(update={"metadata": metadata, "directory": importer.root,
                                   "agent": importer.agent})


def part_row(part: Part) -> Part:
    """``part`` with its ids checked and the decision on it (if a tool call) dropped."""
    check_id(part.id, "part", where="part.id")
    _check(f"part {part.id}.session_id", "session", part.session_id)
    _check(f"part {part.id}.message_id", "message", part.message_id)
    if isinstance(part, SubtaskPart):
        _check(f"part {part.id}.child_session_id", "session", part.child_session_id)
    if isinstance(part, FilePart) and part.image is not None:
        # the image's name is the only thing that reaches its file: exactly a hash and a type
        image_files.image_path(".", part.image.sha256, part.mime)
    if not PART_GRANTS & part.metadata.keys():
        return part
    kept = {k: v for k, v in part.metadata.items() if k not in PART_GRANTS}
    return part.model_copy(update={"metadata": kept})


def message_row(message: Message) -> Message:
    """``message`` with its ids checked and its parts made plain data (``part_row``)."""
    check_id(message.id, "message", where="message.id")
    _check(f"message {message.id}.session_id", "session", message.session_id)
    _check(f"message {message.id}.parent_id", "message", message.parent_id)
    _check(f"message {message.id}.replay_of", "message", message.replay_of)
    return message.model_copy(update={"parts": [part_row(p) for p in message.parts]})


# Events that act when read back: a checkpoint is what "Revert to here" writes into a file or a
# cell (tools/checkpoint.py). From a file anyone wrote, a crafted one would rewrite a person's
# file or put cells in their notebook at the next revert; imported, each is kept as a record
# under a type nothing acts on.
ACTING_EVENTS = (FILE_EVENT, CELL_EVENT)
IMPORTED_PREFIX = "imported."


def event_row(event: Event) -> Event:
    """``event`` with its ids checked; one that acts when read back (``ACTING_EVENTS``) renamed
    so that it stays a record only."""
    check_id(event.id, "event", where="event.id")
    _check(f"event {event.id}.session_id", "session", event.session_id)
    if event.type in ACTING_EVENTS:
        return event.model_copy(update={"type": IMPORTED_PREFIX + event.type})
    return event


def trusted_directory(directory: str | None, root: str) -> str:
    """``directory`` if it is ``root`` or inside it (both resolved), else ``root``: a stored
    directory outside the Forge's root is no root for the file tools."""
    real_root = os.path.realpath(root)
    if directory:
        real = os.path.realpath(directory)
        if real == real_root or real.startswith(real_root.rstrip("/") + "/"):
            return directory
    return root


def new_session_directory(directory: str | os.PathLike[str] | None, root: str) -> str:
    """The directory of a session created now: ``root`` unless one inside it is asked for; one
    outside it is refused (a session's file tools stay inside the Forge's root)."""
    chosen = str(directory or root)
    if trusted_directory(chosen, root) != chosen:
        raise InvalidOption(f"directory {chosen[:200]!r} is outside this Forge's root {root}: a "
                            "session's file tools stay inside the root. Make a Forge with root= "
                            "that folder (or one holding it) to work there.")
    return chosen
