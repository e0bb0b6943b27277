"""The person's decision on a staged cell change (``cell-reviewed`` from the page, or
``cell_auto_accept``): an event row of its session, like the answer to an approval."""

from __future__ import annotations

import logging
from typing import Any

from ...message import Event

log = logging.getLogger(__name__)


def record_review(forge: Any, session_id: str, change_id: str, cell_id: str, edit: str,
                  decision: str, by: str) -> None:
    """A staged change decided: an event row of its session (who, when), written now."""
    forge.projection.put_event(Event(
        session_id=session_id, type="cell.reviewed", actor=by,
        data={"change_id": change_id, "cell_id": cell_id, "edit": edit, "decision": decision}))
    try:
        forge.flush()
    except Exception:  # the store busy or gone: the row stays buffered for the next flush
        log.warning("forge: a cell review was not stored yet", exc_info=True)
