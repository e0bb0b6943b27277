"""The read model of the REST API: the store's rows for one tenant, as JSON-ready dicts.

The store is opened the way the kernels open it (store/duckdb/file.py): no handle is kept
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

On PostgreSQL (``Forge.db`` a ``postgresql://`` URL) the same queries run in PostgreSQL itself,
translated as the DataFrames' are (store/postgres/select.py), in the store's read-only
transaction under its tenant, where the row-level security policies scope every row. The SQL
below is written once, in portable forms where the dialects differ (a window instead of
``arg_max`` of text by number, a subquery alias).

What a session costs, its title, which messages a compaction superseded and where the
boundaries are: derived once, by the frames (frames.py) and the SQL views (store/sql/views.py);
this module only selects and pages. Every query is forge's own fixed SQL run through
``frames.selecting`` (the store's tenant only), every value a bound parameter.
"""

from __future__ import annotations

import threading
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import NotFound
from ..message import TERMINAL_STATUSES
from ..store.sql.views import for_one_session
from . import params, shapes
from .params import BadRequest, SessionCursor

if TYPE_CHECKING:
    from ..store.base import Store

# One page of the newest-first session list, with what the panel needs beside the frame's
# columns: where the session's notebook is, and how many sessions branch from it.
_PAGE = """
WITH page AS (
    SELECT s.id, s.updated_at, s.metadata FROM session s
    WHERE {where}
    ORDER BY s.updated_at DESC, s.id DESC LIMIT ?
), prompts AS (  -- the notebooks of a session's prompts that name one (forks, old files)
    SELECT sm.session_id, m.origin ->> '$.notebook' AS notebook,
           row_number() OVER (PARTITION BY sm.session_id ORDER BY sm.pos DESC) AS latest
    FROM session_message sm JOIN message m ON m.id = sm.message_id
    WHERE sm.session_id IN (SELECT id FROM page) AND m.role = 'user'
      AND m.origin ->> '$.notebook' IS NOT NULL
), asked AS (
    SELECT session_id, notebook FROM prompts WHERE latest = 1
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
# Sessions whose title, name or timeline's text part contains the search (lower-cased both
# sides; ``{lower}`` is the function that does it, see ``_lowering``). # DuckDB: contains() takes the text literally, so % and _ are no wildcards).
_FOUND = """(contains({lower}(coalesce(s.title, '')), {lower}(?))
    OR contains({lower}(coalesce(s.name, '')), {lower}(?))
    OR s.id IN (
    SELECT sm.session_id FROM session_message sm JOIN part p ON p.message_id = sm.message_id
    WHERE p.type = 'text' AND contains({lower}(p.data ->> '$.text'), {lower}(?))))"""
# PostgreSQL's lower() follows the database's locale: under C (``initdb --no-locale``, common
# in containers) "CAFÉ" stays "CAFÉ" where DuckDB gives "café". Its ICU root collation lowers
# every script as DuckDB does; a server built without ICU keeps the locale's rule.
_ICU_LOWER = "forge_icu_lower"
_HAS_ICU = "SELECT count(*) AS n FROM pg_collation WHERE collname = 'und-x-icu'"

# The marks the ``timeline`` view derives for a page of positions, and every compaction
# boundary of the timeline with its compaction event's figures: one pass over the view.
_MARKS = """
SELECT t.pos, t.message_id, NOT t.visible_to_model AS superseded, t.is_boundary AS boundary,
       t.pos >= ? AND t.pos < ? AS on_page, t.parent_id AS request_message_id,
       CASE WHEN t.is_boundary THEN (
           SELECT max(sm.pos) FROM session_message sm WHERE sm.session_id = t.session_id
              AND sm.message_id = t.parent_id AND sm.pos < t.pos) END AS request_pos,
       c.created_at, c.auto, c.extractive, c.reason, c.tokens_before, c.tokens_after
FROM ({one}) t LEFT JOIN compactions c ON t.is_boundary AND c.summary_message_id = t.message_id
WHERE t.session_id = ? AND (t.is_boundary OR (t.pos >= ? AND t.pos < ?)) ORDER BY t.pos""".replace(
    "{one}", for_one_session("timeline"))  # the session's timeline alone, not every one's

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
            "coalesce(created_at >= ?, false) AS in_today, true AS in_all FROM costs) AS scoped")


_TOTALS = _totals_sql()


class HistoryReader:
    """The history of one tenant in one DuckDB file or PostgreSQL database, read for the API."""

    def __init__(self, path: Path | None, tenant: str, *, lock_timeout: float | None = None,
                 url: str | None = None):
        self.path = path  # None: the server was configured with no file (":memory:", a URL)
        self.url = url  # a postgresql:// URL: the database the kernels write
        self.tenant = tenant
        self.lock_timeout = lock_timeout
        self._store: Store | None = None
        self._guard = threading.Lock()
        self._icu: bool | None = None  # PostgreSQL: whether lower() can use ICU (_lowering)

    @property
    def where(self) -> str:
        """What the log says this reader reads (a URL without its password)."""
        if self.url is not None:
            from ..store.postgres.store import describe

            return describe(self.url)
        return str(self.path) if self.path is not None else "no file"

    def store(self) -> Store | None:
        """The store, or None while its file does not exist (a read never creates it)."""
        if self.url is None and (self.path is None or not self.path.exists()):
            return None
        with self._guard:
            # kept: a file's store holds no handle while idle, only its settings; a
            # PostgreSQL pool opens on the first read, and stays
            if self._store is None:
                from ..store.open import open_store

                self._store = open_store(self.url if self.url is not None else self.path,
                                         tenant=self.tenant, lock_timeout=self.lock_timeout)
            return self._store

    def _lowering(self, store: Store) -> str:
        """The SQL function the search lower-cases with: DuckDB's ``lower``; on PostgreSQL
        ``lower`` under the ICU root collation where the server has it."""
        if store.dialect == "duckdb":
            return "lower"
        if self._icu is None:
            from .. import frames

            with frames.selecting(store) as run:
                self._icu = bool(run(_HAS_ICU, None)["n"].iloc[0])
        return _ICU_LOWER if self._icu else "lower"

    def close(self) -> None:
        """Let the store go (a PostgreSQL pool's connections); the next read opens it again."""
        with self._guard:
            store, self._store = self._store, None
        if store is not None:
            store.close()

    # -- sessions ---------------------------------------------------------------------------

    def sessions(self, q: str | None, cursor: SessionCursor | None, limit: int, *,
                 notebook: tuple[str, str] | None = None) -> dict[str, Any]:
        """A page of live sessions, most recent activity first; ``q`` finds a title, name or
        message text containing it; ``notebook`` (its path absolute and as sent) keeps the
        sessions that notebook created (its top-level ones, as its kernel picks its current session)."""
        store = self.store()
        if store is None:
            return {"sessions": [], "next_cursor": None}
        where, params = ["s.deleted_at IS NULL"], []
        if cursor is not None:
            where.append("(epoch_us(s.updated_at) < ? OR (epoch_us(s.updated_at) = ? AND s.id < ?))")
            params += [cursor.activity_us, cursor.activity_us, cursor.session_id]
        if q is not None:
            where.append(_FOUND.format(lower=self._lowering(store)))
            params += [q, q, q]
        if notebook is not None:
            where.append("s.metadata ->> '$.notebook' IN (?, ?) AND s.parent_id IS NULL")
            params += list(notebook)
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

    def _rows(self, store: Store, where: str, params: list[Any]
              ) -> list[tuple[dict[str, Any], int]]:
        """(the API's session dict, its activity in µs) for the sessions ``where`` selects,
        newest activity first; the figures and titles are ``frames.sessions``'."""
        from .. import frames

        with frames.selecting(store) as run:
            page = run(_PAGE.format(where=where), params)
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
        from .. import frames

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
        with frames.selecting(store) as run:
            marks = run(_MARKS, [start, stop, session_id, session_id, start, stop]
                        ).to_dict("records")
        flags = {int(r["pos"]): r for r in marks if r["on_page"]}
        messages = []
        for pos, message in enumerate(page.items, start):
            mark = flags.get(pos, {})
            messages.append(shapes.message_json(message, pos, bool(mark.get("superseded")),
                                                bool(mark.get("boundary"))))
        return {"messages": messages,
                "boundaries": [shapes.boundary_json(r) for r in marks if r["boundary"]],
                "next_cursor": page.next_cursor}

    def record(self, session_id: str, pos: int) -> dict[str, Any]:
        """The cell record of the turn whose prompt is at ``pos``: what the kernel leaves in a
        %%forge cell when the turn ends, for a cell whose front end was closed meanwhile."""
        from ..render import turn_work_html, turn_work_text

        store = self._existing()
        page = store.timeline(session_id, cursor=str(pos), limit=params.MESSAGES_LIMIT[1])
        if not page.items or not _is_prompt(page.items[0]):
            raise BadRequest(f"position {pos} of this session's timeline is not a prompt; send "
                             "the pos of a user message the messages route listed")
        turn = []
        for message in page.items[1:]:
            if _is_prompt(message):
                break
            turn.append(message)
        done = bool(turn) and all(m.role != "assistant" or m.status in TERMINAL_STATUSES for m in turn)
        data = ({"text/html": turn_work_html(turn, with_answer=True),
                 "text/plain": turn_work_text(turn, with_answer=True)} if turn else {})
        return {"prompt": shapes.message_json(page.items[0], pos, False, False)["origin"],
                "done": done, "data": data}

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

    def _totals(self, store: Store, session_id: str | None, notebook: str | None,
                since: datetime | None) -> dict[str, Any]:
        from .. import frames

        with frames.selecting(store) as run:
            frame = run(_TOTALS, [session_id, session_id, notebook, since])
        return frame.to_dict("records")[0]

    def _existing(self) -> Store:
        store = self.store()
        if store is None:
            raise NotFound("no store file yet")
        return store


def _is_prompt(message: Any) -> bool:
    """A person's prompt: a user message with text, not a compaction's request."""
    return message.role == "user" and not any(p.type == "compaction" for p in message.parts) \
        and any(p.type == "text" and not getattr(p, "synthetic", False) for p in message.parts)
