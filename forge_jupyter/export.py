"""Sessions in and out of the store: JSON export and import, Parquet export of a view (DESIGN §8).

An export is one JSON document: the session, its timeline in order (each message with its
parts), and its events. Writing is atomic (a temp file beside the target, fsync, rename), so
a reader never sees half a file. Known secret values are scrubbed from every string
(``scrub.Scrubber``), and tool calls left unfinished (a crashed run) are closed as errors,
the message marked ``interrupted``: an export never carries an orphaned call.

An import validates the whole file first — the JSON, every message and part, and the
store's own rules, by a dry run into a scratch memory store — and then writes the session in
one transaction: a truncated or inconsistent file imports nothing. Every body of the
imported timeline belongs to the imported session (a fork's shared messages become its own).

An import is data, never authority (imported.py): every id is checked against the id
grammar, grants and approvals are dropped, and the session's root becomes the importing
Forge's.

The images tools showed travel in the file too (``images``: hash → base64, outside the
scrubbed text: a secret's pattern must not be "found" in an image's base64), and an import
keeps each in the new session's outputs — only under the hash its bytes have, only for a part
that names it (``carried_images`` / ``keep_images``).

An import never overwrites. Ids are kept, so importing a file into a database that already
holds its session (imported before, or exported from there) is refused with
``DuplicateId``; ``new_ids=True`` imports a copy under fresh ids (order preserved), and
``name=`` renames it.
"""

from __future__ import annotations

import base64
import json
import os
import tempfile
from collections.abc import Callable
from contextlib import suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError

from . import image_files
from .errors import DuplicateId, ForgeError
from .ids import new_id
from .imported import Importer, event_row, message_row, session_row
from .message import Event, FilePart, Message, SessionInfo, now, part_from_json
from .scrub import Scrubber
from .session.recovery import close_open_parts
from .store.base import Store
from .store.inmemory.store import MemoryStore
from .store.ops import AppendMessage, Op, PutEvent, PutMessage, PutPart

FORMAT = "forge-jupyter.session"
VERSION = 1
UNFINISHED = "unfinished when the session was exported: closed so that no call stays orphaned"


class ImportFailed(ForgeError):
    """A file that cannot be imported as it is; nothing was written."""


# ------------------------------------------------------------------------------ files


def atomic_write(path: str | os.PathLike[str], write: Callable[[IO[bytes]], None]) -> Path:
    """Write ``path`` through ``write`` into a temp file beside it, fsync, rename over it."""
    target = Path(path).expanduser()
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        with suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    with suppress(OSError):  # the rename itself durable; not every filesystem allows it
        dir_fd = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    return target


def scrub(value: Any, scrubber: Scrubber) -> Any:
    """``value`` (JSON data) with secrets replaced in every string."""
    return scrubber.data(value)


def scrub_table(table: Any, scrubber: Scrubber) -> Any:
    """An Arrow table with secrets replaced in its text columns. Arrow's own regex engine
    picks the few values that may hold one (``Scrubber.triggers``); only those are scrubbed."""
    import pyarrow as pa
    import pyarrow.compute as pc

    triggers = scrubber.triggers()
    for i, field in enumerate(table.schema):
        if not (pa.types.is_string(field.type) or pa.types.is_large_string(field.type)):
            continue
        if field.name.endswith("_id"):  # ids are made here, never text from outside
            continue
        column = table.column(i).combine_chunks()
        mask = pc.fill_null(pc.match_substring_regex(column, triggers, ignore_case=True), False)
        if not pc.any(mask).as_py():
            continue
        values = pc.filter(column, mask).to_pylist()
        clean = [scrubber(v) for v in values]
        if clean != values:
            column = pc.replace_with_mask(column, mask, pa.array(clean, type=field.type))
            table = table.set_column(i, field, column)
    return table


def close_orphans(messages: list[Message], reason: str) -> tuple[list[Message], list[str]]:
    """The messages with unfinished parts closed (tools as errors) and unfinished messages
    marked ``interrupted``; and the ids of the parts closed."""
    at = now()
    out, closed_ids = [], []
    for m in messages:
        closed = {p.id: p for p in close_open_parts(m, tool_error=reason, at=at)}
        if not closed and m.is_terminal:
            out.append(m)
            continue
        closed_ids.extend(closed)
        update: dict[str, Any] = {"parts": [closed.get(p.id, p) for p in m.parts]}
        if not m.is_terminal:
            update |= {"status": "interrupted", "completed_at": at}
        out.append(m.model_copy(update=update))
    return out, closed_ids


# ------------------------------------------------------------------------------ images

Outputs = Callable[[str], str]  # a session id → its outputs folder (Forge.output_dir)


def _kept(messages: list[Message]) -> list[FilePart]:
    return [p for m in messages for p in m.parts if isinstance(p, FilePart) and p.image]


def carried_images(messages: list[Message], outputs: Outputs | None) -> dict[str, str]:
    """The kept images the messages' file parts name, base64 by hash (those still on disk)."""
    found: dict[str, str] = {}
    for p in _kept(messages) if outputs is not None else []:
        sha = p.image.sha256 if p.image is not None else ""
        if sha in found:
            continue
        try:
            data = image_files.load(outputs(p.session_id), sha, p.mime)
        except image_files.BadImageName:
            continue
        if data is not None:
            found[sha] = base64.b64encode(data).decode()
    return found


def keep_images(doc: dict[str, Any], parts: list[FilePart], outputs: Outputs | None) -> int:
    """Keep the images an imported file carries for the parts (of their new session) naming
    them, each under the hash its bytes have; returns how many were kept."""
    carried = doc.get("images")
    if outputs is None or not isinstance(carried, dict):
        return 0
    n = 0
    for p in parts:
        sha = p.image.sha256 if p.image is not None else None
        raw = carried.get(sha)
        if not isinstance(raw, str) or len(raw) > image_files.MAX_BYTES * 4 // 3 + 4:
            continue
        try:
            data = base64.b64decode(raw, validate=True)
        except ValueError:
            continue
        if image_files.digest(data) != sha:
            continue  # not the image the part names: not kept under its name
        image_files.save(outputs(p.session_id), data, p.mime)
        n += 1
    return n


# ------------------------------------------------------------------------------ export


def export_session(store: Store, session_id: str, path: str | os.PathLike[str],
                   scrubber: Scrubber | None = None, outputs: Outputs | None = None) -> Path:
    """Write the session (timeline, parts, events, and the images its parts name, read from
    ``outputs``) to ``path`` as JSON; returns the path."""
    with store.hold():
        info = store.get_session(session_id)
        messages = store.read_timeline(session_id)
        events = list(store.iter_events(session_id))
    messages, closed = close_orphans(messages, UNFINISHED)
    doc = {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": datetime.now(UTC).isoformat(),
        "session": info.to_json(),
        "messages": [{**m.to_json(), "parts": [p.to_json() for p in m.parts]} for m in messages],
        "events": [e.to_json() for e in events],
        "closed_on_export": closed,
    }
    doc = scrub(doc, scrubber or Scrubber.from_environment())
    doc["images"] = carried_images(messages, outputs)
    data = json.dumps(doc, ensure_ascii=False, indent=1).encode()
    return atomic_write(path, lambda f: f.write(data))


# ------------------------------------------------------------------------------ import


def _read(path: Path) -> dict[str, Any]:
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise ImportFailed(f"cannot read {path}: {err.strerror or err}") from None
    try:
        doc = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        where = (f" at line {err.lineno}, column {err.colno}"
                 if isinstance(err, json.JSONDecodeError) else "")
        raise ImportFailed(
            f"{path} is not complete JSON ({getattr(err, 'msg', err)}{where}; {len(raw)} "
            "bytes): the file is truncated or damaged. Nothing was imported; export the "
            "session again."
        ) from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ImportFailed(f"{path} is not a forge-jupyter session export (its 'format' is "
                           f"not {FORMAT!r}). Nothing was imported.")
    version = doc.get("version")
    if not isinstance(version, int) or version > VERSION:
        raise ImportFailed(f"{path} is export version {version!r}; this forge-jupyter reads "
                           f"version {VERSION} at most. Upgrade forge-jupyter to import it.")
    return doc


def _parse(path: Path, doc: dict[str, Any], importer: Importer
           ) -> tuple[SessionInfo, list[Message], list[Event]]:
    """Every row of the document as a model object, made plain data (imported.py: ids
    checked, grants dropped, the root this Forge's); ``ImportFailed`` saying where if not."""
    where = "session"
    try:
        info = session_row(SessionInfo.model_validate(doc["session"]), importer)
        messages = []
        for i, raw in enumerate(doc["messages"]):
            where = f"messages[{i}]"
            body = dict(raw)
            parts = body.pop("parts", [])
            message = Message.model_validate(body)
            for j, p in enumerate(parts):
                where = f"messages[{i}].parts[{j}]"
                part = part_from_json(p)
                if part.message_id != message.id:
                    raise ValueError(f"part {part.id} names message {part.message_id}, "
                                     f"but sits in message {message.id}")
                message.parts.append(part)
            messages.append(message_row(message))
        events = []
        for i, raw in enumerate(doc.get("events", [])):
            where = f"events[{i}]"
            events.append(event_row(Event.model_validate(raw)))
    except (KeyError, TypeError, ValueError, ValidationError) as err:
        what = f"missing {err}" if isinstance(err, KeyError) else str(err).splitlines()[0]
        raise ImportFailed(f"{path}: {where} is not valid ({what}). Nothing was imported.") from None
    return info, messages, events


def _renumber(doc: Any, info: SessionInfo, messages: list[Message], events: list[Event]) -> Any:
    """``doc`` with every id of the session, its messages, parts and events replaced by a
    fresh one wherever it appears — minted in the old ids' order, so ordering by id holds."""
    kinds = {"session": [info.id], "message": sorted(m.id for m in messages),
             "part": sorted(p.id for m in messages for p in m.parts),
             "event": sorted(e.id for e in events)}
    fresh = {old: new_id(kind) for kind, ids in kinds.items() for old in ids}

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            return fresh.get(value, value)
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        return value

    return walk(doc)


def _ops(info: SessionInfo, messages: list[Message], events: list[Event]) -> list[Op]:
    """The batch that writes the timeline; every body belongs to the imported session."""
    sid = info.id
    ops: list[Op] = []
    for m in messages:
        ops.append(PutMessage(m.row().model_copy(update={"session_id": sid})))
        ops.extend(PutPart(p.model_copy(update={"session_id": sid})) for p in m.parts)
        ops.append(AppendMessage(sid, m.id))
    ops.extend(PutEvent(e.model_copy(update={"session_id": sid})) for e in events)
    return ops


def import_session(store: Store, path: str | os.PathLike[str], importer: Importer, *,
                   name: str | None = None, new_ids: bool = False,
                   scrubber: Scrubber | None = None, outputs: Outputs | None = None) -> SessionInfo:
    """Validate the export at ``path`` whole, then write it as one session in one transaction
    (under ``importer``'s root and agent, granting nothing: imported.py), and keep the images
    it carries in the new session's ``outputs``."""
    source = Path(path).expanduser()
    raw = _read(source)
    images = {"images": raw.pop("images", None)}  # bytes, not text: never scrubbed
    doc = scrub(raw, scrubber or Scrubber.from_environment())
    info, messages, events = _parse(source, doc, importer)
    original = info.id
    if new_ids:
        info, messages, events = _parse(source, _renumber(doc, info, messages, events), importer)
    if name is not None:
        info = info.model_copy(update={"name": name})
    messages, closed = close_orphans(messages, UNFINISHED)
    ops = _ops(info, messages, events)
    ops.append(PutEvent(Event(session_id=info.id, type="import", actor="user", data={
        "source": str(source), "exported_at": doc.get("exported_at"),
        "original_session_id": original, "messages": len(messages), "closed_parts": closed,
    })))
    try:  # the store's own rules, on a scratch store: a file that breaks them writes nothing
        MemoryStore().create_session_with(info, ops)
    except ForgeError as err:
        raise ImportFailed(f"{source} holds an inconsistent session ({err}). "
                           "Nothing was imported.") from None
    try:
        created = store.create_session_with(info, ops)
    except DuplicateId as err:
        raise DuplicateId(
            f"{source} was not imported: {err}. An import never overwrites — this database "
            "already holds that session or its messages (imported before, or exported from "
            "here). Import a copy with new ids (import_session(path, new_ids=True)), give a "
            "taken name another one (name=…), or delete the existing session first."
        ) from None
    parts = [p.model_copy(update={"session_id": info.id}) for p in _kept(messages)]
    keep_images(images, parts, outputs)
    return created


# ------------------------------------------------------------------------------ parquet


def export_parquet(store: Store, view_name: str, path: str | os.PathLike[str]) -> Path:
    """Write one view (store/sql/views.py) of this tenant's rows to a Parquet file, atomically."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from .store.query.sandbox import snapshot
    from .store.sql.scoped import scoped
    from .store.sql.views import view

    view(view_name)  # a clear error for a name that is not a view
    with snapshot(store, view_name) as con:
        sql = scoped(con, f"SELECT * EXCLUDE (tenant_id) FROM {view_name}", store.tenant_id)
        table = con.sql(sql).to_arrow_table()
    # instants in UTC, whatever time zone the connection hands them over in
    fields = [pa.field(f.name, pa.timestamp(f.type.unit, "UTC"))
              if pa.types.is_timestamp(f.type) and f.type.tz else f for f in table.schema]
    table = table.cast(pa.schema(fields))
    table = scrub_table(table, Scrubber.from_environment())  # rows stored before scrubbing too
    return atomic_write(path, lambda f: pq.write_table(table, f))
