"""A notebook's recorded turns as one portable file, so they travel with the notebook (replay).

``export_notebook_turns`` writes every session whose timeline holds a turn recorded in the
notebook — timelines in order, each message once with its parts — scrubbed of known secrets,
atomically. ``import_notebook_turns`` writes them into another store for a notebook at another
path: each turn's origin is rewritten to that notebook, so its Run All replays them (no key
needed). Message ids are kept — a replay finds "the same point of history" by them — so an
import is idempotent: what the store already holds is skipped, never overwritten. A session
whose timeline begins with messages another imported session wrote (a fork) is recreated as a
fork of it. Each session lands in one transaction.

The file's ``python`` calls run in this kernel when its turns replay: like any import it is data,
never authority (imported.py) — approvals recorded in it (someone else's "allow for the
session") are dropped, ids checked, the sessions' root made this Forge's — so under ``build`` a
replay of an imported turn asks before it runs code, once per cell.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .errors import NotFound
from .export import (
    UNFINISHED,
    ImportFailed,
    Outputs,
    atomic_write,
    carried_images,
    close_orphans,
    keep_images,
    scrub,
)
from .ids import check_id
from .imported import Importer, message_row, session_row
from .message import FilePart, Message, SessionInfo, part_from_json
from .scrub import Scrubber
from .session.replay_match import candidates
from .store.base import Store
from .store.ops import AppendMessage, Op, PutMessage, PutPart

FORMAT = "forge-jupyter.notebook-turns"
VERSION = 1


@dataclass
class TurnsImport:
    """What an import wrote and what it found already there."""

    sessions: list[str] = field(default_factory=list)
    messages: int = 0
    skipped_sessions: list[str] = field(default_factory=list)


def notebook_key(notebook: str | os.PathLike[str]) -> str:
    """A notebook as its turns record it: the absolute path (notebook/controller.py)."""
    return os.path.abspath(os.fspath(notebook))


def export_notebook_turns(store: Store, notebook: str | os.PathLike[str],
                          path: str | os.PathLike[str], scrubber: Scrubber | None = None,
                          outputs: Outputs | None = None) -> Path:
    """Write the recorded turns of ``notebook`` to ``path`` (JSON), with the images their
    parts name (read from ``outputs``); returns the path."""
    key = notebook_key(notebook)
    sids = list(dict.fromkeys(s for s, *_ in candidates(store, key)))
    if not sids:
        raise NotFound(f"no turn recorded in {key} is in this store (a notebook's turns are "
                       "recorded under its absolute path; run its %%forge cells first)")
    sessions, bodies, messages = [], {}, []
    with store.hold():
        infos = sorted((store.get_session(s) for s in sids), key=lambda i: (i.created_at, i.id))
        for info in infos:
            timeline = store.read_timeline(info.id)
            timeline, _ = close_orphans(timeline, UNFINISHED)
            sessions.append({"session": info.to_json(), "timeline": [m.id for m in timeline]})
            for m in timeline:
                if m.id not in bodies:
                    messages.append(m)
                bodies.setdefault(m.id, {**m.to_json(), "parts": [p.to_json() for p in m.parts]})
    doc = scrub({"format": FORMAT, "version": VERSION, "notebook": Path(key).name,
                 "exported_at": datetime.now(UTC).isoformat(), "sessions": sessions,
                 "messages": list(bodies.values())}, scrubber or Scrubber.from_environment())
    doc["images"] = carried_images(messages, outputs)  # bytes, not text: never scrubbed
    data = json.dumps(doc, ensure_ascii=False, indent=1).encode()
    return atomic_write(path, lambda f: f.write(data))


def _read(source: Path) -> dict[str, Any]:
    try:
        doc = json.loads(source.read_bytes())
    except OSError as err:
        raise ImportFailed(f"cannot read {source}: {err.strerror or err}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ImportFailed(f"{source} is not complete JSON ({err}); nothing was imported. "
                           "Export the notebook's turns again.") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ImportFailed(f"{source} is not a forge-jupyter notebook-turns export (its "
                           f"'format' is not {FORMAT!r}); nothing was imported.")
    if not isinstance(doc.get("version"), int) or doc["version"] > VERSION:
        raise ImportFailed(f"{source} is version {doc.get('version')!r}; this forge-jupyter "
                           f"reads version {VERSION} at most. Upgrade it to import the file.")
    return doc


def _parse(source: Path, doc: dict[str, Any], key: str, importer: Importer
           ) -> tuple[list[tuple[SessionInfo, list[str]]], dict[str, Message]]:
    where = "messages"
    try:
        bodies: dict[str, Message] = {}
        for i, raw in enumerate(doc["messages"]):
            where = f"messages[{i}]"
            body = dict(raw)
            parts = [part_from_json(p) for p in body.pop("parts", [])]
            m = Message.model_validate(body)
            if any(p.message_id != m.id for p in parts):
                raise ValueError(f"a part of message {m.id} names another message")
            if m.origin and m.origin.get("notebook"):  # the notebook it now belongs to
                m = m.model_copy(update={"origin": {**m.origin, "notebook": key}})
            m.parts = parts
            # approvals given elsewhere grant nothing here (replay.py asks); ids checked
            m = message_row(m)
            bodies[m.id] = m
        sessions = []
        for i, raw in enumerate(doc["sessions"]):
            where = f"sessions[{i}]"
            info = session_row(SessionInfo.model_validate(raw["session"]), importer)
            if info.metadata.get("notebook"):
                info = info.model_copy(update={"metadata": {**info.metadata, "notebook": key}})
            timeline = [check_id(t, "message", where="timeline") for t in raw["timeline"]]
            missing = [t for t in timeline if t not in bodies]
            if missing:
                raise ValueError(f"its timeline names message {missing[0]}, which the file lacks")
            sessions.append((info, timeline))
    except (KeyError, TypeError, ValueError, ValidationError) as err:
        what = f"missing {err}" if isinstance(err, KeyError) else str(err).splitlines()[0]
        raise ImportFailed(f"{source}: {where} is not valid ({what}); nothing was imported.") from None
    return sessions, bodies


def _has(store: Store, message_id: str) -> bool:
    try:
        store.get_message(message_id, with_parts=False)
    except NotFound:
        return False
    return True


def _writes(sid: str, ids: list[str], bodies: dict[str, Message]) -> list[Op]:
    ops: list[Op] = []
    for mid in ids:
        m = bodies[mid]
        ops.append(PutMessage(m.row().model_copy(update={"session_id": sid})))
        ops.extend(PutPart(p.model_copy(update={"session_id": sid})) for p in m.parts)
        ops.append(AppendMessage(sid, mid))
    return ops


def import_notebook_turns(store: Store, path: str | os.PathLike[str],
                          notebook: str | os.PathLike[str], importer: Importer,
                          scrubber: Scrubber | None = None,
                          outputs: Outputs | None = None) -> TurnsImport:
    """Import the turns exported at ``path`` as recorded in ``notebook`` (this machine's path),
    under ``importer``'s root and agent, granting nothing (imported.py); the images the file
    carries are kept in the outputs of the sessions that now hold their parts."""
    source = Path(path).expanduser()
    key = notebook_key(notebook)
    raw = _read(source)
    images = {"images": raw.pop("images", None)}
    doc = scrub(raw, scrubber or Scrubber.from_environment())
    sessions, bodies = _parse(source, doc, key, importer)
    report = TurnsImport()
    timelines: dict[str, list[str]] = {}
    with store.hold():
        for info, timeline in sessions:
            try:
                store.get_session(info.id)
                report.skipped_sessions.append(info.id)
                timelines[info.id] = timeline
                continue
            except NotFound:
                pass
            shared = 0  # the leading messages another session already holds: a fork of it
            while shared < len(timeline) and _has(store, timeline[shared]):
                shared += 1
            if any(_has(store, mid) for mid in timeline[shared:]):
                report.skipped_sessions.append(info.id)  # shares bodies other than a prefix
                continue
            rest = timeline[shared:]
            if shared:
                parent = next((s for s, t in timelines.items() if t[:shared] == timeline[:shared]),
                              None)
                if parent is None:
                    report.skipped_sessions.append(info.id)
                    continue
                store.fork(parent, timeline[shared - 1], info)
                if rest:
                    store.write(_writes(info.id, rest, bodies))
            else:
                store.create_session_with(info, _writes(info.id, rest, bodies))
            timelines[info.id] = timeline
            report.sessions.append(info.id)
            report.messages += len(rest)
            keep_images(images, [p.model_copy(update={"session_id": info.id})
                                 for mid in rest for p in bodies[mid].parts
                                 if isinstance(p, FilePart) and p.image], outputs)
    return report
