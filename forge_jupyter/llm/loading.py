"""litellm, imported on first use, offline and quiet.

Never at ``import forge_jupyter``: it costs about a second. Its price table is the bundled
local copy (``LITELLM_LOCAL_MODEL_COST_MAP``), so nothing waits on the network.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_litellm: Any = None


def litellm() -> Any:
    """The litellm module, imported once, offline and quiet."""
    global _litellm
    if _litellm is None:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        import litellm as module

        module.suppress_debug_info = True  # else an unprefixed model prints a provider list
        module.drop_params = True  # a provider that lacks a param (stream_options) ignores it
        # litellm prices every streamed call up front by counting the prompt with tiktoken,
        # before any usage arrives — loading two BPE tables (~110 MB resident) into the
        # kernel for a figure forge never reads (it prices the usage the provider sends,
        # usage.py). Off; forge counts locally only for a provider that sends no usage.
        module.disable_token_counter = True
        _litellm = module
    return _litellm


_counting = 0  # counts in progress: the switch goes off again when the last one ends
_counting_guard = threading.Lock()


@contextmanager
def counting() -> Iterator[Any]:
    """litellm with its token counter on, for a count forge asks for itself (usage.py, the
    benchmarks): off otherwise, see ``litellm()``. Counts in two threads at once both count
    (the first to end does not turn the counter off under the other)."""
    global _counting
    module = litellm()
    with _counting_guard:
        _counting += 1
        module.disable_token_counter = False
    try:
        yield module
    finally:
        with _counting_guard:
            _counting -= 1
            if not _counting:
                module.disable_token_counter = True
