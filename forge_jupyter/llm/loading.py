"""litellm, imported on first use, offline and quiet.

Never at ``import forge_jupyter``: it costs about a second. Its price table is the bundled
local copy (``LITELLM_LOCAL_MODEL_COST_MAP``), so nothing waits on the network.
"""

from __future__ import annotations

import os
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


@contextmanager
def counting() -> Iterator[Any]:
    """litellm with its token counter on, for a count forge asks for itself (usage.py, the
    benchmarks): off otherwise, see ``litellm()``."""
    module = litellm()
    module.disable_token_counter = False
    try:
        yield module
    finally:
        module.disable_token_counter = True
