"""Deprecated name of ``forge_jupyter.message`` (Message and Part), kept so older imports work.

The module was renamed so that it is not confused with ``model_choice`` (which LLM a prompt uses);
singular, because ``forge_jupyter.messages`` is the history's ``messages()`` frame.
"""

from __future__ import annotations

import warnings
from typing import Any

from . import message as _messages


def __getattr__(name: str) -> Any:
    value = getattr(_messages, name)  # AttributeError for a name message does not have
    warnings.warn(
        f"forge_jupyter.model is renamed: import {name} from forge_jupyter.message",
        DeprecationWarning, stacklevel=2,
    )
    return value
