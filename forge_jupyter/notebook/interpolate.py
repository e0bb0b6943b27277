"""A prompt's ``{name}`` placeholders filled from the notebook's variables (``%%forge`` cells,
their commands): ``str.format`` over the namespace, with a message naming a missing one."""

from __future__ import annotations

import string
from typing import Any

from IPython.core.error import UsageError


class _Namespace(dict):
    def __init__(self, ns: dict[str, Any]) -> None:
        super().__init__()
        self.ns = ns

    def __missing__(self, key: str) -> Any:
        if key in self.ns:
            return self.ns[key]
        raise UsageError(f"the prompt names {{{key}}}, but there is no variable {key!r} in the "
                         "notebook. Write {{ and }} for literal braces.")


def interpolate(body: str, namespace: dict[str, Any]) -> str:
    """``{name}`` → the variable's str(); ``{df.shape}`` and ``{x!r}`` work as in format()."""
    try:
        return string.Formatter().vformat(body, (), _Namespace(namespace))
    except UsageError:
        raise
    except (ValueError, IndexError, AttributeError, KeyError) as exc:
        raise UsageError(f"could not fill in the prompt's {{…}} placeholders: {exc}. "
                         "Write {{ and }} for literal braces.") from None
