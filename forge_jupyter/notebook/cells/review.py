"""The person's decision on a staged cell change (``cell-reviewed`` from the page, or
``cell_auto_accept``): an event row of its session, like the answer to an approval.

The ids a decision names come from the page, and the page read them from the notebook's
metadata — which a cloned or downloaded notebook controls. So a decision is recorded only for
a change its session's own checkpoint names (``cell.changed``, written by the cell tool that
made it, tools/checkpoint.py), and once: a notebook cannot write decisions into sessions it
names, nor decide a change twice."""

from __future__ import annotations

import logging
from typing import Any

from ...message import Event
from ...tools.checkpoint import CELL_EVENT, REVIEW_EVENT

log = logging.getLogger(__name__)


def record_review(forge: Any, session_id: str, change_id: str, cell_id: str, edit: str,
                  decision: str, by: str) -> str | None:
    """A staged change decided: an event row of its session (who, when), written now. Returns
    why it was not recorded, or None."""
    try:
        forge.flush()  # the change's checkpoint may still be buffered by the running turn
        made = _rows(forge.store, session_id, CELL_EVENT, change_id)
        decided = _rows(forge.store, session_id, REVIEW_EVENT, change_id)
    except Exception:  # the store busy or gone: nothing to check the ids against
        log.warning("forge: a cell review could not be checked", exc_info=True)
        return "the store could not be read; decide the cell again once it can"
    if not any(e.data.get("cell_id") == cell_id and e.data.get("edit") == edit for e in made):
        return (f"change {change_id!r} is not one the agent made to cell {cell_id!r} in session "
                f"{session_id!r} (the notebook's metadata names it; it may come from another "
                "machine's notebook)")
    if decided:
        return None  # decided already (a page resending after a restart): once is the record
    forge.projection.put_event(Event(
        session_id=session_id, type=REVIEW_EVENT, actor=by,
        data={"change_id": change_id, "cell_id": cell_id, "edit": edit, "decision": decision}))
    try:
        forge.flush()
    except Exception:  # the store busy or gone: the row stays buffered for the next flush
        log.warning("forge: a cell review was not stored yet", exc_info=True)
    return None



def _rows(store: Any, session_id: str, kind: str, change_id: str) -> list[Event]:
    """The session's ``kind`` events about ``change_id``."""
    return [e for e in store.iter_events(session_id, type=kind)
            if e.data.get("change_id") == change_id]
