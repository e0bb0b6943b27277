"""The read model of the REST API: the store's rows for one tenant, as JSON-ready dicts.

The store is opened the way the kernels open it (store/duckdb_file.py): no handle is kept
while idle; each read of a page takes the file for one short transaction and gives it back
(a page costs two or three), so a kernel writing the same file waits at most one of them,
and a reader waits its turn behind a writer (the lock queue, retried with backoff) instead of
failing. Not one ``store.hold()`` around the page: measured with four processes prompting
while the API is read in a loop (benchmarks/bench_server_reader.py), the writers' p99 is
set by the longest time the reader keeps the file, and a page's Python work (frames,
validation) would count in it. Between two reads of a page a writer may commit; nothing a
page shows depends on that (positions never move, a superseded message stays superseded).
A store file that does not exist yet holds nothing: every list is empty, and no read
creates it.

What a session costs, its title, which messages a compaction superseded and where the
boundaries are: derived once, by the frames (frames.py) and the SQL views (store/views.py);
this module only selects and pages. Every query is forge's own fixed SQL run through
``query.select`` (the store's tenant only), every value a bound parameter.
"""

from __future__ import annotations

import threading
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import NotFound
from . import shapes
from .params import BadRequest, SessionCursor

if TYPE_CHECKING:
    from ..store.duckdb import DuckDBStore

# One page of the newest-first session list, with what the panel needs beside the frame's
# columns: where the session's notebook is, and how many sessions branch from it.
_PAGE = """
WITH page AS (
    SELECT s.id, s.updated_at, s.metadata FROM session s
    WHERE {where}
    ORDER BY s.updated_at DESC, s.id DESC LIMIT ?
), asked AS (  -- the notebook of a session's latest prompt that names one (forks, old files)
    SELECT sm.session_id, arg_max(m.origin ->> '$.notebook', sm.pos) AS notebook
    FROM session_message sm JOIN message m ON m.id = sm.message_id
    WHERE sm.session_id IN (SELECT id FROM page) AND m.role = 'user'
      AND m.origin ->> '$.notebook' IS NOT NULL
    GROUP BY sm.session_id
), branches AS (
    SELECT coalesce(forked_from_session, parent_id) AS parent, count(*) AS children
    FROM session
    WHERE deleted_at IS NULL AND coalesce(forked_from_session, parent_id) IN (SELECT id FROM page)
    GROUP BY 1
)
SELECT p.id AS session_id, epoch_us(p.updated_at) AS activity_us,
       coalesce(p.metadata ->> '$.notebook', a.notebook) AS notebook,
       coalesce(b.children, 0) AS children
FROM page p LEFT JOIN asked a ON a.session_id = p.id LEFT JOIN branches b ON b.parent = p.id
ORDER BY p.updated_at DESC, p.id DESC
"""
# Sessions whose timeline holds a text part containing the search (lower-cased both sides by
# DuckDB: contains() takes the text literally, so % and _ are no wildcards).
_FOUND = """s.id IN (
    SELECT sm.session_id FROM session_message sm JOIN part p ON p.message_id = sm.message_id
    WHERE p.type = 'text' AND contains(lower(p.data ->> '$.text'), lower(?)))"""

# The marks the ``timeline`` view derives for a page of positions, and every compaction
# boundary of the timeline with its compaction event's figures: one pass over the view.
_MARKS = """
SELECT t.pos, t.message_id, NOT t.visible_to_model AS superseded, t.is_boundary AS boundary,
       t.pos >= ? AND t.pos < ? AS on_page, t.parent_id AS request_message_id,
       CASE WHEN t.is_boundary THEN (
           SELECT max(sm.pos) FROM session_message sm WHERE sm.session_id = t.session_id
              AND sm.message_id = t.parent_id AND sm.pos < t.pos) END AS request_pos,
       c.created_at, c.auto, c.extractive, c.reason, c.tokens_before, c.tokens_after
FROM timeline t LEFT JOIN compactions c ON t.is_boundary AND c.summary_message_id = t.message_id
WHERE t.session_id = ? AND (t.is_boundary OR (t.pos >= ? AND t.pos < ?)) ORDER BY t.pos"""

_SCOPES = ("session", "notebook", "today", "all")


def _totals_sql() -> str:
    """Sums of the ``costs`` view (one row per model call) for each scope, in one scan. A scope
    with no model call cost $0; a sum skips calls whose price is unknown (``unpriced_steps``
    counts them)."""
    columns = []
    for scope in _SCOPES:
        f = f"FILTER (WHERE in_{scope})"
        columns += [
            f"CASE WHEN count(*) {f} = 0 THEN 0 ELSE sum(cost) {f} END AS {scope}_cost",
            f"coalesce(sum(tokens_input) {f}, 0)::BIGINT AS {scope}_input_tokens",
            f"coalesce(sum(tokens_output) {f}, 0)::BIGINT AS {scope}_output_tokens",
            f"count(DISTINCT user_message_id) {f} AS {scope}_turns",
            f"count(*) {f} AS {scope}_steps",
            f"count(*) {f} - count(cost) {f} AS {scope}_unpriced_steps",
        ]
    # whether the session asked for is a live one of this tenant: its 404, in the same read
    columns.append("(SELECT count(*) FROM session s WHERE s.id = ? AND s.deleted_at IS NULL) "
                   "AS session_live")
    return (f"SELECT {', '.join(columns)} FROM (SELECT *, coalesce(session_id = ?, false) AS "
            "in_session, coalesce(notebook = ?, false) AS in_notebook, "
            "coalesce(created_at >= ?, false) AS in_today, true AS in_all FROM costs)")


_TOTALS = _totals_sql()


class HistoryReader:
    """The history of one tenant in one DuckDB file, read for the API."""

    def __init__(self, path: Path | None, tenant: str, *, lock_timeout: float | None = None):
        self.path = path  # None: the server was configured with no file (":memory:")
        self.tenant = tenant
        self.lock_timeout = lock_timeout
        self._store: DuckDBStore | None = None
        self._guard = threading.Lock()

    def store(self) -> DuckDBStore | None:
        """The store, or None while its file does not exist (a read never creates it)."""
        if self.path is None or not self.path.exists():
            return None
        with self._guard:
            if self._store is None:  # kept: it holds no handle while idle, only its settings
                from ..store.duckdb import DEFAULT_LOCK_TIMEOUT, DuckDBStore

                timeout = self.lock_timeout or DEFAULT_LOCK_TIMEOUT
                self._store = DuckDBStore(self.path, tenant_id=self.tenant, lock_timeout=timeout)
            return self._store

    # -- sessions ---------------------------------------------------------------------------

    def sessions(self, q: str | None, cursor: SessionCursor | None, limit: int) -> dict[str, Any]:
        """A page of live sessions, most recent activity first; ``q`` finds a title, name or
        message text containing it."""
        store = self.store()
        if store is None:
            return {"sessions": [], "next_cursor": None}
        where, params = ["s.deleted_at IS NULL"], []
        if cursor is not None:
            where.append("(epoch_us(s.updated_at) < ? OR (epoch_us(s.updated_at) = ? AND s.id < ?))")
            params += [cursor.activity_us, cursor.activity_us, cursor.session_id]
        if q is not None:
            where.append("(contains(lower(coalesce(s.title, '')), lower(?)) OR "
                         f"contains(lower(coalesce(s.name, '')), lower(?)) OR {_FOUND})")
            params += [q, q, q]
        page = self._rows(store, " AND ".join(where), [*params, limit + 1])
        more = len(page) > limit
        page = page[:limit]
        last = page[-1] if page else None
        return {
            "sessions": [row for row, _ in page],
            "next_cursor": SessionCursor(last[1], last[0]["id"]).encode() if more and last else None,
        }

    def session(self, session_id: str) -> dict[str, Any]:
        """One live session with its cost totals and timeline length (NotFound otherwise)."""
        store = self._existing()
        found = self._rows(store, "s.id = ? AND s.deleted_at IS NULL", [session_id, 1])
        if not found:  # of no one, of another tenant, deleted: one answer
            raise NotFound(session_id)
        [(row, _)] = found
        totals = self._totals(store, session_id, None, None)
        return {"session": row, "totals": {**shapes.totals(totals, "session"),
                                           "messages": row["messages"]}}

    def _rows(self, store: DuckDBStore, where: str, params: list[Any]
              ) -> list[tuple[dict[str, Any], int]]:
        """(the API's session dict, its activity in µs) for the sessions ``where`` selects,
        newest activity first; the figures and titles are ``frames.sessions``'."""
        from .. import frames
        from ..store.query import select

        with store.reading() as con:
            page = select(con, _PAGE.format(where=where), params, store.tenant_id)
        extras = page.to_dict("records")
        if not extras:
            return []
        details = frames.sessions(store, ids=[e["session_id"] for e in extras])
        by_id = {r["session_id"]: r for r in details.to_dict("records")}
        return [(shapes.session_row(by_id[e["session_id"]], e), int(e["activity_us"]))
                for e in extras if e["session_id"] in by_id]

    # -- messages ---------------------------------------------------------------------------

    def messages(self, session_id: str, start: int, limit: int) -> dict[str, Any]:
        """A page of the session's whole timeline from position ``start``: superseded messages
        included and marked, and every compaction boundary of the session."""
        from ..store.query import select

        store = self._existing()
        page = store.timeline(session_id, cursor=str(start), limit=limit)  # NotFound: another
        # tenant's, deleted, no one's
        if not page.items and start > 0:
            length = store.timeline_length(session_id)
            if start > length:
                raise BadRequest(f"cursor {start} is past the end of this session's timeline "
                                 f"({length} messages); send the next_cursor of the page "
                                 "before, or leave cursor out for the first page")
        stop = start + len(page.items)
        with store.reading() as con:
            marks = select(con, _MARKS, [start, stop, session_id, start, stop],
                           store.tenant_id).to_dict("records")
        flags = {int(r["pos"]): r for r in marks if r["on_page"]}
        messages = []
        for pos, message in enumerate(page.items, start):
            mark = flags.get(pos, {})
            messages.append(shapes.message_json(message, pos, bool(mark.get("superseded")),
                                                bool(mark.get("boundary"))))
        return {"messages": messages,
                "boundaries": [shapes.boundary_json(r) for r in marks if r["boundary"]],
                "next_cursor": page.next_cursor}

    # -- costs ------------------------------------------------------------------------------

    def costs(self, session_id: str | None, notebook: str | None, since: datetime
              ) -> dict[str, Any]:
        """Cost totals of a session, of a notebook, since ``since`` (today) and of everything."""
        store = self.store()
        if store is None:
            if session_id is not None:
                raise NotFound(session_id)
            empty = shapes.totals({}, "all")
            return {"session": None, "notebook": None if notebook is None else empty,
                    "today": empty, "all": empty}
        row = self._totals(store, session_id, notebook, since)
        if session_id is not None and not row["session_live"]:
            raise NotFound(session_id)  # of no one, of another tenant, deleted: one answer
        return {
            "session": None if session_id is None else shapes.totals(row, "session"),
            "notebook": None if notebook is None else shapes.totals(row, "notebook"),
            "today": shapes.totals(row, "today"),
            "all": shapes.totals(row, "all"),
        }

    def _totals(self, store: DuckDBStore, session_id: str | None, notebook: str | None,
                since: datetime | None) -> dict[str, Any]:
        from ..store.query import select

        with store.reading() as con:
            frame = select(con, _TOTALS, [session_id, session_id, notebook, since],
                           store.tenant_id)
        return frame.to_dict("records")[0]

    def _existing(self) -> DuckDBStore:
        store = self.store()
        if store is None:
            raise NotFound("no store file yet")
        return store
