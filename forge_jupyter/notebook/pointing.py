"""What a ``%%forge`` prompt points at, for the cell magic: its mentions read from the body
(mentions/grammar.py) and, once the turn's session is known, what they and the images pasted
in the side panel's box attach (mentions/resolve.py, panel.py). A prompt from the panel is a
``%%forge --panel`` cell, so both ways in go through here. Errors are ``UsageError``s: the cell
fails saying what to write, and nothing is sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from IPython.core.error import UsageError

from . import panel
from .mentions.grammar import MentionError, Parsed, parse


def read(body: str) -> Parsed:
    """The body's mentions, read before ``{name}`` fills in (a value is no mention)."""
    try:
        return parse(body)
    except MentionError as exc:
        raise UsageError(str(exc)) from None


async def attach(controller: Any, session: Any, pointed: Parsed, image_ids: Sequence[str],
                 view: Any) -> dict[str, Any]:
    """``prompt_async``'s attachments and images: the mentions as they are now (one pointing
    at nothing sends nothing), the pasted images taken from the panel's hub. On an error the
    cell's ``view`` is finished empty: no turn began."""
    options: dict[str, Any] = {}
    try:
        if pointed.mentions:
            options["attachments"] = await controller.attachments(session, pointed.mentions)
        if image_ids:  # sent ahead over the panel's comm
            options["images"] = panel.HUB.pasted.take(image_ids)
    except (MentionError, ValueError) as exc:
        view.finish([])
        raise UsageError(str(exc)) from None
    return options
