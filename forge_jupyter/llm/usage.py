"""Usage and cost: tokens from the wire, counted locally where it sent none, priced offline.

Cost comes from litellm's bundled price table; a model the table lacks has cost ``None``
("cost unknown"), never 0 — except the offline demo model, which is known to be free. Counts made here, not by the provider, are marked ``estimated``.
"""

from __future__ import annotations

import json
from typing import Any

from ..demo import DEMO_MODEL
from ..message import Tokens
from .loading import counting, litellm

# Models whose price is known without litellm's table: the offline demo runs here, for nothing.
FREE_MODELS = frozenset({DEMO_MODEL})

# The rule of thumb where no tokenizer answers: about four characters a token.
CHARS_PER_TOKEN = 4


def approx_tokens(chars: int) -> int:
    """Tokens in ``chars`` characters by the rule of thumb (no tokenizer)."""
    return chars // CHARS_PER_TOKEN


def tokens_from_usage(usage: Any) -> Tokens:
    """A provider's usage object (or dict) as Tokens."""
    def get(obj: Any, name: str) -> int:
        if obj is None:
            return 0
        value = obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)
        return int(value or 0)

    completion_details = getattr(usage, "completion_tokens_details", None)
    prompt_details = getattr(usage, "prompt_tokens_details", None)
    return Tokens(
        input=get(usage, "prompt_tokens"),
        output=get(usage, "completion_tokens"),
        reasoning=get(completion_details, "reasoning_tokens"),
        cache_read=get(prompt_details, "cached_tokens") or get(usage, "cache_read_input_tokens"),
        cache_write=get(usage, "cache_creation_input_tokens"),
    )


def wire_had_usage(response: Any) -> bool | None:
    """Whether the provider itself sent usage (None: cannot tell).

    When a provider sends no usage, litellm synthesizes a usage chunk from its own tokenizer
    and marks it nowhere. Its stream wrapper keeps every provider chunk it processed in
    ``.chunks``, with the provider's usage still attached, so that list tells the two apart.
    """
    chunks = getattr(response, "chunks", None)
    if not isinstance(chunks, list):
        return None
    # from the end: the usage chunk is the last one, where a provider sends it
    return any(getattr(c, "usage", None) is not None for c in reversed(chunks))


def count_tokens(model: str, *, messages: list[dict] | None = None, text: str | None = None) -> int:
    """A local token count (litellm's tokenizer for the model, else tiktoken's default)."""
    # litellm's counter answers 0 while its switch is off (loading.py turns it off against
    # litellm's own up-front pricing); forge's own counts turn it on for their call
    with counting() as lm:
        try:
            if messages is not None:
                return int(lm.token_counter(model=model, messages=messages))
            return int(lm.token_counter(model=model, text=text or ""))
        except Exception:  # an unknown tokenizer: the rule of thumb
            size = len(json.dumps(messages)) if messages is not None else len(text or "")
            return max(1, approx_tokens(size))


def estimated_usage(model: str, messages: list[dict[str, Any]], output: str) -> Tokens:
    """What a round cost when the provider said nothing: the request's messages and the
    output that streamed, counted here and marked estimated."""
    return Tokens(input=count_tokens(model, messages=messages),
                  output=count_tokens(model, text=output) if output else 0, estimated=True)


def step_cost(model: str, tokens: Tokens) -> float | None:
    """Cost from litellm's bundled price table; None when the table lacks the model."""
    if model in FREE_MODELS:
        return 0.0
    lm = litellm()
    try:
        prompt_cost, completion_cost = lm.cost_per_token(
            model=model,
            prompt_tokens=tokens.input,
            completion_tokens=tokens.output,
            cache_read_input_tokens=tokens.cache_read,
            cache_creation_input_tokens=tokens.cache_write,
        )
    except Exception:
        return None
    return float(prompt_cost) + float(completion_cost)


def _price(model: str, key: str) -> float | None:
    """One entry of litellm's bundled price table, or None for a model it does not know."""
    if model in FREE_MODELS:
        return 0.0
    try:
        info = litellm().get_model_info(model=model)
    except Exception:
        return None
    price = info.get(key)
    return float(price) if price is not None else None


def input_price(model: str) -> float | None:
    """USD per input token, or None for a model the price table does not know."""
    return _price(model, "input_cost_per_token")


def output_price(model: str) -> float | None:
    """USD per output token, or None for a model the price table does not know."""
    return _price(model, "output_cost_per_token")


def context_window(model: str) -> tuple[int | None, int | None]:
    """(max input tokens, max output tokens) from litellm's model info, None where unknown."""
    lm = litellm()
    try:
        info = lm.get_model_info(model=model)
    except Exception:
        return None, None
    max_in = info.get("max_input_tokens") or info.get("max_tokens")
    max_out = info.get("max_output_tokens")
    return (int(max_in) if max_in else None, int(max_out) if max_out else None)
