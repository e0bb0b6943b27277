"""Durations and money as a person reads them: ground floor, so that the message model's own
repr can say a cost without reaching up into the renderer (``render.numbers`` re-exports them;
the live widget's labextension/src/render/words.js says the same)."""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Context, Decimal


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
