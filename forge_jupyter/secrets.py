"""Secret scrubbing: known secret values never reach the model, the store or the screen.

Values of the providers' key variables in the environment (and any key configured on the
Forge) are replaced by ``[secret:NAME]`` in tool outputs, tool errors, live output and exports.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

_NAME = re.compile(r"(API_KEY|_KEY|TOKEN|SECRET|PASSWORD|PASSWD)$|^(AWS|AZURE)_", re.I)
MIN_LENGTH = 8  # shorter values would match ordinary text


class Scrubber:
    def __init__(self, secrets: dict[str, str]) -> None:
        self.secrets = {k: v for k, v in secrets.items() if v and len(v) >= MIN_LENGTH}
        ordered = sorted(self.secrets.items(), key=lambda kv: -len(kv[1]))
        self._pattern = re.compile("|".join(re.escape(v) for _, v in ordered)) if ordered else None
        self._names = {v: k for k, v in ordered}

    @classmethod
    def from_environment(cls, extra: Iterable[tuple[str, str | None]] = ()) -> Scrubber:
        found = {k: v for k, v in os.environ.items() if _NAME.search(k)}
        found.update({k: v for k, v in extra if v})
        return cls(found)

    def __call__(self, text: str | None) -> str | None:
        if not text or self._pattern is None:
            return text
        return self._pattern.sub(lambda m: f"[secret:{self._names[m.group(0)]}]", text)
