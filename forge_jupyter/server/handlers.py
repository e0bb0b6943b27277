"""The HTTP handlers of ``/forge/api/``: read-only, JSON, behind Jupyter's authentication.

Each handler checks its parameters (params.py: 400 with what to send), then runs the read in
the extension's small thread pool — a read may wait its turn behind a kernel writing the
store, and the server's event loop (which also carries every kernel's websocket) must never
wait with it. The tenant and the file are the server's (app.py), never the request's.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import Executor
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from tornado import web
from tornado.ioloop import IOLoop

from ..errors import ForgeError, NotFound, StoreLocked
from . import params
from .reader import HistoryReader

AUTH_RESOURCE = "forge"  # what a custom Authorizer sees (action "read" for every route)


class ForgeAPIHandler(APIHandler):
    """The common part: GET only, the reader, the errors as JSON."""

    SUPPORTED_METHODS = ("GET",)  # anything else: 405, before authentication is looked at
    auth_resource = AUTH_RESOURCE
    # a panel refreshing its lists is not a person working: it must not keep an idle
    # server from being culled
    _track_activity = False

    def initialize(self, reader: HistoryReader, executor: Executor) -> None:
        self.reader = reader
        self.executor = executor

    def arg(self, name: str) -> str | None:
        return self.get_query_argument(name, None)

    def reading(self, *path_args: str) -> Callable[[], dict[str, Any]]:
        """The read this request asks for, its parameters checked (``params.BadRequest``)."""
        raise NotImplementedError

    @web.authenticated
    @authorized
    async def get(self, *path_args: str) -> None:
        try:
            read = self.reading(*path_args)
            # off the event loop: the read may wait its turn behind a kernel's write
            result = await IOLoop.current().run_in_executor(self.executor, read)
        except params.BadRequest as error:
            raise web.HTTPError(400, str(error)) from None
        except NotFound:
            # one answer for an id of no one and for another tenant's: nothing tells them apart
            raise web.HTTPError(404, NO_SESSION) from None
        except StoreLocked as error:
            self.set_header("Retry-After", "2")
            raise web.HTTPError(503, str(error)) from None
        except ForgeError as error:  # a damaged or too new file: its message says what to do
            raise web.HTTPError(500, str(error)) from None
        self.set_header("Cache-Control", "no-store")
        self.finish(json.dumps(result))


NO_SESSION = ("no such session in this server's store; list the sessions with "
              "GET /forge/api/sessions")


class SessionsHandler(ForgeAPIHandler):
    """``GET /forge/api/sessions?q=&cursor=&limit=&notebook=``"""

    def reading(self) -> Callable[[], dict[str, Any]]:
        q = params.search(self.arg("q"))
        cursor = params.session_cursor(self.arg("cursor"))
        limit = params.limit(self.arg("limit"), params.SESSIONS_LIMIT)
        notebook = params.notebook(self.arg("notebook"), self.settings.get("server_root_dir", ""))
        return lambda: self.reader.sessions(q, cursor, limit, notebook=notebook)


class SessionHandler(ForgeAPIHandler):
    """``GET /forge/api/sessions/{id}``"""

    def reading(self, raw_id: str) -> Callable[[], dict[str, Any]]:
        sid = params.session_id(raw_id)
        return lambda: self.reader.session(sid)


class MessagesHandler(ForgeAPIHandler):
    """``GET /forge/api/sessions/{id}/messages?cursor=&limit=``"""

    def reading(self, raw_id: str) -> Callable[[], dict[str, Any]]:
        sid = params.session_id(raw_id)
        start = params.message_cursor(self.arg("cursor"))
        limit = params.limit(self.arg("limit"), params.MESSAGES_LIMIT)
        return lambda: self.reader.messages(sid, start, limit)


class RecordHandler(ForgeAPIHandler):
    """``GET /forge/api/sessions/{id}/record?pos=``"""

    def reading(self, raw_id: str) -> Callable[[], dict[str, Any]]:
        sid = params.session_id(raw_id)
        pos = params.message_cursor(self.arg("pos"))
        return lambda: self.reader.record(sid, pos)


class CostsHandler(ForgeAPIHandler):
    """``GET /forge/api/costs?session=&notebook=&tz=``"""

    def reading(self) -> Callable[[], dict[str, Any]]:
        raw = self.arg("session")
        sid = params.session_id(raw) if raw else None
        notebook = self.arg("notebook") or None
        zone = ZoneInfo(params.time_zone(self.arg("tz")))
        today = datetime.now(zone).replace(hour=0, minute=0, second=0, microsecond=0)
        return lambda: self.reader.costs(sid, notebook, today)


ROUTES: tuple[tuple[str, type[ForgeAPIHandler]], ...] = (
    (r"forge/api/sessions", SessionsHandler),
    (r"forge/api/sessions/([^/]+)", SessionHandler),
    (r"forge/api/sessions/([^/]+)/messages", MessagesHandler),
    (r"forge/api/sessions/([^/]+)/record", RecordHandler),
    (r"forge/api/costs", CostsHandler),
)
