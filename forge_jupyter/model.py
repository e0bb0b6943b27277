"""Deprecated name of ``forge_jupyter.messages`` (Message and Part), kept so older imports work.

The module was renamed so that it is not confused with ``model_choice`` (which LLM a prompt uses).
"""

from __future__ import annotations

import warnings
from typing import Any

from . import messages as _messages


def __getattr__(name: str) -> Any:
    value = getattr(_messages, name)  # AttributeError for a name messages does not have
    warnings.warn(
        f"forge_jupyter.model is renamed: import {name} from forge_jupyter.messages",
        DeprecationWarning, stacklevel=2,
    )
    return value
