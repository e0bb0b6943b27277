"""The live document: the cells as the JupyterLab page holds them (unsaved edits included),
asked of the side panel's comm (``read-cells`` → ``cells``, notebook/ops.py) with a bounded wait.

The tool awaits on the kernel's loop while the %%forge cell runs; ipykernel (≥ 7.4) handles
the comm's messages meanwhile, and the answer resolves a thread-safe future.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from .budget import LIVE_IMAGE_CHARS, LIVE_OUTPUT_CHARS, LIVE_WAIT


async def live_cells(image_ids: Sequence[str] = ()) -> list[Any] | str | None:
    """The page's cells (with ``image_ids``: those cells, their images whole); None when no
    page with the extension is attached; a str saying why when one is but did not answer."""
    from ..panel import HUB

    future = HUB.request_cells(LIVE_OUTPUT_CHARS, image_ids, LIVE_IMAGE_CHARS)
    if future is None:
        return None
    try:
        return await asyncio.wait_for(asyncio.wrap_future(future), LIVE_WAIT)
    except TimeoutError:
        HUB.forget_cells(future)
        return f"the page did not send its cells within {LIVE_WAIT:g} s"
