"""Durations, money and token counts as a person reads them (shared by the record, the text
stream and the widget's text mode; the live widget's labextension/src/render/words.ts says the same)."""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Context, Decimal
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # model.py's repr formats money with this module: no import back at run time
    from ..model import Tokens


def _fixed(value: float, digits: int = 0) -> str:
    """``value`` with ``digits`` decimals, a tie rounded up — as JavaScript's ``toFixed`` and
    ``Math.round`` do (Python's round half to even), so the widget and the record agree."""
    return str(Decimal(value).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))


def seconds(value: float | None) -> str:
    if value is None:
        return ""
    if value < 1:
        return f"{max(0, int(_fixed(value * 1000)))} ms"
    if value < 60:
        return f"{_fixed(value, 2 if value < 10 else 1)} s"
    minutes = int(value // 60)
    return f"{minutes} min {_fixed(value - minutes * 60)} s"


# Past a trillion dollars a cost is a bug upstream (a price table's typo, an overflow): shown
# in scientific notation, not to the cent (and Decimal's 28 digits would refuse 1e26).
_HUGE = 1e12
_TWO_DIGITS = Context(prec=2, rounding=ROUND_HALF_UP)  # JavaScript's toExponential(1) rounding


def money(cost: float | None) -> str:
    if cost is None or not math.isfinite(cost):  # inf/NaN: no price anyone could pay
        return "cost unknown"
    if cost == 0:
        return "$0"
    if abs(cost) >= _HUGE:
        return f"${_TWO_DIGITS.create_decimal(cost):.1e}"
    return f"${_fixed(cost, 4 if cost < 0.01 else 2)}"


def usage(tokens: Tokens, cost: float | None, model: str | None) -> str:
    """``1,234 in · 56 out · $0.0012 · model`` (≈ and "tokens estimated" where the counts were
    made locally: the provider sent none, or the step was stopped before it could)."""
    approx = "≈" if tokens.estimated else ""
    bits = [f"{approx}{tokens.input:,} in", f"{approx}{tokens.output:,} out"]
    if tokens.reasoning:
        bits.append(f"{tokens.reasoning:,} reasoning")
    if tokens.cache_read:
        bits.append(f"{tokens.cache_read:,} cached")
    bits.append(money(cost))
    if model:
        bits.append(model)
    if tokens.estimated:
        bits.append("tokens estimated")
    return " · ".join(bits)
