"""Time-sortable, prefixed identifiers: ``ses_…``, ``msg_…``, ``prt_…``, ``evt_…``.

An id is ``<prefix>_<12 hex: 48-bit ms clock><4 hex: counter><10 base62: random>``.
Within one process ids are strictly increasing even when the wall clock stalls or steps
back (the counter carries, and the clock part never goes backwards), so ordering by id
never depends on clocks agreeing. The random tail keeps ids from two processes distinct.
"""

from __future__ import annotations

import os
import re
import secrets
import threading
import time
from collections.abc import Iterable
from pathlib import Path

from .errors import InvalidOption

_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_PREFIXES = {"session": "ses", "message": "msg", "part": "prt", "event": "evt", "approval": "apr",
             "question": "qst"}

_lock = threading.Lock()
_last_ms = 0
_counter = 0


def _random_tail(n: int = 10) -> str:
    value = int.from_bytes(secrets.token_bytes(8), "big")
    chars = []
    for _ in range(n):
        value, digit = divmod(value, 62)
        chars.append(_ALPHABET[digit])
    return "".join(chars)


def _next_stamp() -> tuple[int, int]:
    global _last_ms, _counter
    with _lock:
        now = time.time_ns() // 1_000_000
        if now > _last_ms:
            _last_ms, _counter = now, 0
        else:
            _counter += 1
            if _counter > 0xFFFF:  # 65,536 ids in one ms: borrow the next millisecond
                _last_ms, _counter = _last_ms + 1, 0
        return _last_ms, _counter


def new_id(kind: str) -> str:
    """A new id for ``kind`` (session, message, part, event, approval,
    question)."""
    prefix = _PREFIXES[kind]
    ms, counter = _next_stamp()
    return f"{prefix}_{ms:012x}{counter:04x}{_random_tail()}"


# The grammar every id that enters from outside is checked against (an import, the Python and
# REST APIs, a stored id about to name a folder): a known prefix, "_", and letters and digits
# only. It holds every id ``new_id`` makes; what it excludes (".", "/", "\\", NUL, spaces, an
# overlong tail) is what could make an id anything but one plain path component.
MAX_ID_TAIL = 40
_ID = re.compile(rf"(?:{'|'.join(_PREFIXES.values())})_[0-9A-Za-z]{{1,{MAX_ID_TAIL}}}")


class InvalidId(InvalidOption):
    """A value that is not an id of forge-jupyter's grammar (``ses_01a2…``)."""


def is_id(value: object, kind: str | None = None) -> bool:
    """Whether ``value`` is an id of the grammar (of ``kind``: session, message, …)."""
    if not isinstance(value, str) or not _ID.fullmatch(value):
        return False
    return kind is None or value.startswith(_PREFIXES[kind] + "_")


def check_id(value: object, kind: str | None = None, *, where: str = "") -> str:
    """``value`` if it is an id of the grammar (of ``kind``), else ``InvalidId`` saying so."""
    if is_id(value, kind):
        return value  # type: ignore[return-value]
    shown = repr(value)[:80] if isinstance(value, str) else type(value).__name__
    want = f"{_PREFIXES[kind]}_" if kind else "a prefix such as ses_"
    raise InvalidId(f"{where + ': ' if where else ''}{shown} is not a forge-jupyter "
                    f"{kind or ''}{' ' if kind else ''}id: ids are {want} followed by up to "
                    f"{MAX_ID_TAIL} letters and digits (as forge made them). Use the id forge "
                    "shows, or the session's name.")


def looks_like_id(value: str, kind: str) -> bool:
    """``value`` starts as an id of ``kind`` does (``ses_``…): then it must be one, never a name."""
    return value.startswith(_PREFIXES[kind] + "_")


def id_path(base: str | os.PathLike[str], value: str, kind: str | None = None) -> Path:
    """The folder ``<base>/<id>``, resolved: the id checked against the grammar and the result
    checked to be one component directly under ``base`` (resolved too), so no stored or
    imported id — nor a link put at that name — can make it name anything else."""
    check_id(value, kind)
    real_base = Path(os.path.realpath(os.fspath(base)))
    found = Path(os.path.realpath(real_base / value))
    if found.parent != real_base or found.name != value:
        raise InvalidId(f"{real_base / value} leads to {found}, not to a folder of {real_base}: "
                        "it is not used. Remove the link at that name.")
    return found


# A shown id: the prefix and the last characters of the random tail (``ses_…k3Vq9a``). Ids made
# in the same millisecond share everything but counter and tail, so the tail is what tells
# them apart; six base62 characters make two ids of one store look alike about once in 5e10.
SHORT_TAIL = 6
_ELLIPSES = ("…", "...")


def short(value: str) -> str:
    """``value`` as a person reads it in a table: ``ses_…k3Vq9a``; anything that is not one
    of our ids is returned as it is."""
    prefix, sep, rest = value.partition("_")
    if not sep or prefix not in _PREFIXES.values() or len(rest) != 26 or not rest.isalnum():
        return value
    return f"{prefix}_…{rest[-SHORT_TAIL:]}"


def match_short(ref: str, ids: Iterable[str]) -> str | None:
    """The one id of ``ids`` that ``ref`` abbreviates (``ses_…k3Vq9a``, ``ses_...k3Vq9a`` or
    ``…k3Vq9a``, as ``short`` shows it); None when ``ref`` is no abbreviation or matches none.
    Raises ``LookupError`` when it matches several (a longer tail tells them apart)."""
    ref = ref.strip()
    for mark in _ELLIPSES:
        head, sep, tail = ref.partition(mark)
        if sep:
            break
    else:
        return None
    if not tail.isalnum() or head not in ("", *(p + "_" for p in _PREFIXES.values())):
        return None
    found = [i for i in ids if i.startswith(head) and i.endswith(tail)]
    if len(found) > 1:
        raise LookupError(f"{ref} could be any of {', '.join(found[:5])}; give more of its "
                          "end or the whole id")
    return found[0] if found else None
