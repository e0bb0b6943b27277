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

_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_PREFIXES = {"session": "ses", "message": "msg", "part": "prt", "event": "evt", "approval": "apr"}

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
    """A new id for ``kind`` (session, message, part, event, approval)."""
    prefix = _PREFIXES[kind]
    ms, counter = _next_stamp()
    return f"{prefix}_{ms:012x}{counter:04x}{_random_tail()}"

