"""How far one model step may stream before forge stops it itself (DESIGN §4).

A server may ignore ``max_tokens``, and a budget only bounds what the provider reports after
the step. So each step gets a cap in characters of output (text, reasoning, tool arguments),
enforced where the stream is read (``LLMRequest.output_cap``, llm/call.py): the least of
- ``max_tokens`` — or the model's own output limit — at twice forge's estimate (4 characters a
  token, llm/usage.py), so a server that honours the limit always stops first;
- what is left of the prompt's budget at the output price, after the request's input;
- ``OUTPUT_CAP_CHARS``, whatever else is known.
While it streams, ``Spending`` adds the step's estimated cost to the prompt's shared pool every
few milliseconds, so parallel subagents cannot each spend what only one of them may.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

from .. import llm
from .allowance import Allowance

OUTPUT_CAP_CHARS = 4_000_000  # ~1M tokens: more than any model writes in one step
LOCAL_MARGIN = 2  # the local stop comes at twice max_tokens by the estimate

Limit = Literal["max_tokens", "output-cap", "budget"]


@dataclass(frozen=True)
class StepCap:
    chars: int
    limit: Limit  # which limit set it
    max_tokens: int | None = None  # the output limit it came from, where that one did


@dataclass
class Spending:
    """A streaming step's estimated cost, kept in the prompt's pool while it streams."""

    allowance: Allowance
    input_cost: float  # the request's input, by the estimate
    price: float  # per output character
    reported: float = 0.0  # what the pool counts of this step now

    def over(self, chars: int) -> bool:
        """Report ``chars`` of output so far; True once the pool's budget is passed."""
        estimate = self.input_cost + chars * self.price
        left = self.allowance.stream(self.reported, estimate)
        self.reported = estimate
        return left is not None and left < 0

    def release(self) -> float:
        """Let go of this step's estimate (its real cost is spent instead); returns it."""
        out, self.reported = self.reported, 0.0
        return out


def _input_chars(request: llm.LLMRequest) -> int:
    return len(request.system) + len(json.dumps(request.messages, ensure_ascii=False))


def step_cap(request: llm.LLMRequest, allowance: Allowance) -> tuple[StepCap, Spending | None]:
    """The cap of one step, and its budget watch (None: no budget, or prices unknown)."""
    cap = StepCap(OUTPUT_CAP_CHARS, "output-cap")
    limit = request.params.get("max_tokens")
    if not isinstance(limit, int) or limit <= 0:
        limit = llm.context_window(request.model)[1]
    if limit:
        chars = limit * llm.CHARS_PER_TOKEN * LOCAL_MARGIN
        if chars < cap.chars:
            cap = StepCap(chars, "max_tokens", limit)
    left = allowance.money_left()
    if left is None:
        return cap, None
    in_price, out_price = llm.input_price(request.model), llm.output_price(request.model)
    if not out_price:
        return cap, None  # the price table does not know the model: the steps' count holds
    input_cost = llm.approx_tokens(_input_chars(request)) * (in_price or 0.0)
    price = out_price / llm.CHARS_PER_TOKEN
    chars = max(0, int((left - input_cost) / price))
    if chars < cap.chars:
        cap = StepCap(chars, "budget")
    return cap, Spending(allowance, input_cost, price)
