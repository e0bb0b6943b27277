"""Time-sortable, prefixed identifiers: ``ses_…``, ``msg_…``, ``prt_…``, ``evt_…``.

An id is ``<prefix>_<12 hex: 48-bit ms clock><4 hex: counter><10 base62: random>``.
Within one process ids are strictly increasing even when the wall clock stalls or steps
back (the counter carries, and the clock part never goes backwards), so ordering by id
never depends on clocks agreeing. The random tail keeps ids from two processes distinct.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Iterable

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
