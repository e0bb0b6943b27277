"""Revert to here (issue 28, item 5): take back what a turn and the later ones changed.

The checkpoints are the session's own event rows (tools/checkpoint.py): ``file.changed`` for
each file a file tool wrote, ``cell.changed`` for each cell a cell tool changed, both keyed by
the tool call's message. A revert to turn N reads those of turns N and later (and of their
subagents' sessions), newest first:

- **files** — each is put back (its earlier bytes, or deleted if the agent created it) only if
  it still holds exactly what the agent left; a file changed since (by the person, a ``python``
  call, another program) is left as it is and named; a file under another root, too big to
  keep or holding a secret was never kept, and is named too;
- **cells** — handed to the notebook layer, which takes them back through the page like Reject
  (notebook/revert.py); a cell the person changed since is left and named;
- **conversation** — a fork of the session at the message before turn N (store fork: pointers
  copied, no bodies), which the notebook then continues in.

What no checkpoint holds is said, never implied: the kernel's variables, files that ``python``
or shell commands changed, and what the person changed since.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from ..errors import ForgeError, ToolError
from ..ids import match_short, short
from ..message import CompactionPart, Event, Message, SubtaskPart
from ..tools.base import ToolContext
from ..tools.checkpoint import CELL_EVENT, FILE_EVENT, digest
from ..tools.write import target

MODES = ("code", "conversation", "both")
NEVER = ("Not restored, ever: the kernel's variables (re-run the cells that make them), files "
         "that python code or shell commands changed, and anything outside the session's root.")


@dataclass(frozen=True)
class Turn:
    number: int  # 1-based, as %forge revert lists them
    message_id: str  # its prompt (the user message)
    position: int  # in the session's timeline
    prompt: str


@dataclass
class Report:
    """What a revert did, for the person: restored, left (and why), the session now current."""

    turn: Turn
    mode: str
    restored: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)
    session_id: str | None = None  # the fork the notebook continues in (conversation)

    def lines(self) -> list[str]:
        head = f"Reverted to turn {self.turn.number} ({first_line(self.turn.prompt)})"
        out = [head + {"code": ": code only, the conversation kept.",
                       "conversation": ": the conversation only, files and cells kept.",
                       "both": ": code and conversation."}[self.mode]]
        if self.mode != "conversation":
            out += [f"restored: {x}" for x in self.restored] or ["restored: nothing (no file "
                                                                 "or cell changes to take back)"]
            out += [f"not restored: {x}" for x in self.left]
        if self.session_id:
            out.append(f"The notebook now continues in session {short(self.session_id)}, a fork "
                       "before that turn; the earlier session is kept (%forge sessions). The "
                       "%%forge cells of the turns taken back stay in the notebook: run again, "
                       "they ask the model anew.")
        out.append(NEVER)
        return out


def first_line(text: str) -> str:
    line = next((x.strip() for x in text.splitlines() if x.strip()), "")
    return f"“{line[:57]}…”" if len(line) > 60 else f"“{line}”"


def note_for_model(report: Report) -> str:
    """What the model is told after a code-only revert: its turns are still in the
    conversation, but what they changed is not in the files and cells any more."""
    lines = [f"Note: the person reverted the code of turn {report.turn.number} and the later "
             "ones: the files and cells those turns changed are back as they were before them "
             "(the conversation is kept). Read them again before relying on them."]
    lines += [f"restored: {x}" for x in report.restored]
    lines += [f"not restored: {x}" for x in report.left]
    return "\n".join(lines)


def turns(messages: list[Message]) -> list[Turn]:
    """The person's prompts of a timeline (a compaction's request is none)."""
    out: list[Turn] = []
    for pos, m in enumerate(messages):
        if m.role == "user" and not any(isinstance(p, CompactionPart) for p in m.parts):
            out.append(Turn(len(out) + 1, m.id, pos, m.text or ""))
    return out


def find_turn(messages: list[Message], which: str) -> Turn:
    """The turn ``which`` names: its number (``-1``: the last), or a message id of it (full, or
    short as %forge history shows it; an answer's id names its prompt's turn)."""
    listed = turns(messages)
    if not listed:
        raise ForgeError("This session has no turns to revert to yet.")
    try:
        n = int(which)
    except ValueError:
        pass
    else:
        if 1 <= n <= len(listed) or -len(listed) <= n <= -1:
            return listed[n - 1 if n > 0 else n]
        raise ForgeError(f"There is no turn {n}: this session has turns 1–{len(listed)} "
                         "(%forge revert lists them).")
    ids = [m.id for m in messages]
    try:
        full = match_short(which, ids) or which
    except LookupError as exc:
        raise ForgeError(str(exc)) from None
    found = next((m for m in messages if m.id == full), None)
    if found is None:
        raise ForgeError(f"{which!r} is no message of this session: give a turn number or a "
                         "message id from %forge revert's list.")
    prompt_id = found.id if found.role == "user" else found.parent_id
    turn = next((t for t in listed if t.message_id == prompt_id), None)
    if turn is None:
        raise ForgeError(f"{which!r} belongs to no turn of this session (a compaction's message).")
    return turn


def checkpoints(store: Any, messages: list[Message], turn: Turn) -> tuple[list[Event], list[Event]]:
    """(file changes, cell changes) of ``turn`` and the later ones, newest first."""
    later = messages[turn.position:]
    ids = {m.id for m in later}
    sessions = dict.fromkeys(m.session_id for m in later)
    children = {p.session_id for m in later for p in m.parts
                if isinstance(p, SubtaskPart) and p.session_id}
    files: list[Event] = []
    cells: list[Event] = []
    for sid in [*sessions, *children]:
        for kind, into in ((FILE_EVENT, files), (CELL_EVENT, cells)):
            into += [e for e in store.iter_events(sid, type=kind)
                     if sid in children or e.data.get("message_id") in ids]
    newest = lambda e: e.id  # noqa: E731 (ids are time-sortable)
    return sorted(files, key=newest, reverse=True), sorted(cells, key=newest, reverse=True)


def restore_files(store: Any, session_id: str, root: str | None, changes: list[Event],
                  report: Report) -> None:
    """Put back each file ``changes`` (newest first) name, where it still holds what the agent
    left; say what was restored and what not, one line per file."""
    here = os.path.realpath(root) if root else None
    ctx = ToolContext(session_id=session_id, message_id="", call_id="", part_id="",
                      store=store, root=root)
    why_not: dict[tuple[str, str], str | None] = {}  # (root, path) → why it stopped (None: not)
    did: dict[tuple[str, str], str] = {}  # what was done to it: "restored", "deleted"
    for e in changes:
        d = e.data
        key = (str(d.get("root", "")), str(d.get("path", "")))
        if why_not.get(key) is not None:
            continue  # this file already stopped at a newer change
        outcome = _restore_one(ctx, here, d)
        if outcome in ("restored", "deleted"):
            did[key] = outcome
            why_not[key] = None
        elif outcome != "already":
            why_not[key] = outcome
        else:
            why_not.setdefault(key, None)
    for (base, path), why in why_not.items():
        if why is not None:
            report.left.append(f"{path}: {why}")
        elif (base, path) in did:
            report.restored.append(path + (" (deleted: the agent created it)"
                                           if did[(base, path)] == "deleted" else ""))


def _restore_one(ctx: ToolContext, here: str | None, d: dict[str, Any]) -> str:
    """One checkpoint put back: "restored", "deleted", "already" (it was as before: an earlier
    revert, or undone), or why not."""
    path, base = str(d.get("path", "")), str(d.get("root", ""))
    if here is None or os.path.realpath(base) != here:
        return f"outside the session's root ({base or 'unknown'}), so not restored"
    text = d.get("before")
    existed = bool(d.get("existed"))
    if existed and not isinstance(text, str):
        why = d.get("unrestorable") or "not kept"
        return f"its earlier content was not kept: {why}"
    try:
        with target(ctx, "revert", path, create=existed) as file:
            now = digest(file.read_bytes()) if file.exists else None
            if now == digest(text.encode("utf-8") if existed else None):
                return "already"
            if now != d.get("after"):
                return ("changed since the agent wrote it (by you or other code), so it was "
                        "left as it is")
            if not existed:
                file.remove()
                return "deleted"
            file.put(text.encode("utf-8"))
            return "restored"
    except (ToolError, OSError) as exc:
        return f"could not be restored: {exc}"


def fork_before(session: Any, turn: Turn) -> Any:
    """A session continuing from just before ``turn``: a fork at the message before it (a new
    empty session of the same kind when it is the first)."""
    store = session.forge.services.store
    if turn.position == 0:
        info = session.info
        return session.forge.session(new=True, agent=info.agent, model=info.model,
                                     directory=info.directory,
                                     metadata={**info.metadata, "reverted_from": session.id})
    before = store.timeline(session.id, cursor=str(turn.position - 1), limit=1,
                            with_parts=False).items[0]
    return session.fork(at=before.id, metadata={**session.info.metadata,
                                                "reverted_from": session.id})


def record(session: Any, report: Report, by: str) -> None:
    """The revert as an event row of the session it took back (who, when, what)."""
    forge = session.forge
    forge.services.projection.put_event(Event(
        session_id=session.id, type="revert", actor=by,
        data={"message_id": report.turn.message_id, "turn": report.turn.number,
              "mode": report.mode, "restored": report.restored, "left": report.left,
              "session_id": report.session_id}))
    forge.flush()
