"""The query parameters of the REST API, checked: limits, cursors, the search text, a time zone.

Every value a request sends is untrusted. A value that does not parse is a ``BadRequest``
whose message says what to send instead (the handlers answer it with 400); nothing here
touches the store. Cursors are opaque to clients: they send back the ``next_cursor`` a page
gave them.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass

from ..ids import is_id

SESSIONS_LIMIT = (50, 200)  # (default, most) sessions per page
MAX_PATH = 4096  # characters of a notebook path
MESSAGES_LIMIT = (100, 500)  # (default, most) messages per page
MAX_QUERY = 200  # characters of a search
_DIGITS = re.compile(r"[0-9]{1,10}")


class BadRequest(ValueError):
    """A parameter the API cannot use; the message says what to send."""


def limit(raw: str | None, bounds: tuple[int, int]) -> int:
    """``limit``: a whole number from 1 to the endpoint's most; its default when absent."""
    default, most = bounds
    if raw is None or raw == "":
        return default
    if not _DIGITS.fullmatch(raw) or not 1 <= int(raw) <= most:
        raise BadRequest(f"limit must be a whole number from 1 to {most} (got {raw[:20]!r}); "
                         f"leave it out for {default}")
    return int(raw)


def search(raw: str | None) -> str | None:
    """``q``: the text to find (case-insensitive, literally: ``%`` and ``_`` are no wildcards)."""
    text = (raw or "").strip()
    if not text:
        return None
    if len(text) > MAX_QUERY:
        raise BadRequest(f"q is at most {MAX_QUERY} characters (got {len(text)}); "
                         "search for a shorter part of the text")
    if "\x00" in text:
        raise BadRequest("q cannot hold a NUL character; search for printable text")
    return text


def notebook(raw: str | None, root: str) -> tuple[str, str] | None:
    """``notebook``: a notebook's path as JupyterLab names it (relative to the server's root):
    (absolute, as its kernel records it; as given, as a script may have); None when absent."""
    import os

    text = (raw or "").strip()
    if not text:
        return None
    if len(text) > MAX_PATH or "\x00" in text:
        raise BadRequest(f"notebook is a path of at most {MAX_PATH} characters, without NUL; "
                         "send the notebook's path as JupyterLab shows it")
    return os.path.abspath(os.path.join(os.path.expanduser(root), text.lstrip("/"))), text


def session_id(raw: str) -> str:
    """A session id from the path, checked against the id grammar (``ids.is_id``, the one
    check every entry uses); anything else is simply not found ("")."""
    return raw if is_id(raw, "session") else ""


# -------------------------------------------------------------------------------- cursors

_BAD_CURSOR = ("cursor is not one this API gave ({why}); send the next_cursor of the page "
               "before, or leave cursor out for the first page")


@dataclass(frozen=True, slots=True)
class SessionCursor:
    """Where the next page of the newest-first session list starts: after this session."""

    activity_us: int  # the last session's updated_at, microseconds since the epoch
    session_id: str

    def encode(self) -> str:
        text = f"{self.activity_us}:{self.session_id}"
        return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def session_cursor(raw: str | None) -> SessionCursor | None:
    if raw is None or raw == "":
        return None
    try:
        padded = raw + "=" * (-len(raw) % 4)
        text = base64.urlsafe_b64decode(padded.encode("ascii")).decode()
    except (binascii.Error, UnicodeError, ValueError):
        raise BadRequest(_BAD_CURSOR.format(why="not base64 text")) from None
    activity, sep, sid = text.partition(":")
    if not sep or not re.fullmatch(r"-?[0-9]{1,19}", activity) or not session_id(sid):
        raise BadRequest(_BAD_CURSOR.format(why="not a session position"))
    return SessionCursor(int(activity), sid)


def message_cursor(raw: str | None) -> int:
    """The timeline position a page of messages starts at (0 for the first page)."""
    if raw is None or raw == "":
        return 0
    if not _DIGITS.fullmatch(raw):
        raise BadRequest(_BAD_CURSOR.format(why="not a position in the timeline"))
    return int(raw)


def time_zone(raw: str | None) -> str:
    """``tz``: an IANA time zone name (``Europe/Paris``) that ``today`` is counted in; UTC
    when absent."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    name = (raw or "").strip() or "UTC"
    # a name, never a path: ZoneInfo would otherwise read files named by the request
    if len(name) > 64 or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_+\-]*(/[A-Za-z0-9_+\-]+)*", name):
        raise BadRequest(f"tz must be a time zone name such as Europe/Paris (got {name[:64]!r})")
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise BadRequest(f"tz {name!r} is no time zone this server knows; send a name such "
                         "as Europe/Paris, or leave tz out for UTC") from None
    return name
