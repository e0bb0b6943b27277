"""Images pasted or dropped in the side panel's box, kept until the prompt naming them runs.

The box sends each image over the comm (``image``) just before the ``%%forge --panel --image
paste_…`` cell that names it; that cell takes them, each once. The kernel holds a few only
(a page pasting without sending cannot grow it), the oldest dropped first.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

PASTED_PER_PROMPT = 4  # images one prompt from the box carries
PASTED_KEPT = 8  # images pasted in the box the kernel holds until their prompt runs


class PastedImages:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._images: dict[str, tuple[bytes, str]] = {}  # image id → (bytes, MIME), not yet sent

    def keep(self, image_id: str, data: bytes, mime: str) -> None:
        with self._lock:
            self._images[image_id] = (data, mime)
            while len(self._images) > PASTED_KEPT:
                self._images.pop(next(iter(self._images)))

    def take(self, ids: Sequence[str]) -> list[tuple[bytes, str]]:
        """The pasted images ``ids`` names, each taken once; a ValueError for one not here."""
        if len(ids) > PASTED_PER_PROMPT:
            raise ValueError(f"{len(ids)} images are pasted; a prompt takes at most "
                             f"{PASTED_PER_PROMPT}: remove some and send.")
        with self._lock:
            missing = [i for i in ids if i not in self._images]
            if missing:
                raise ValueError(f"the pasted image {missing[0]} is not in this kernel (it "
                                 "restarted, or the image was sent long ago): paste it again "
                                 "and send.")
            return [self._images.pop(i) for i in ids]
