"""Durations, money and token counts as a person reads them (shared by the record, the text
stream and the widget's text mode)."""

from __future__ import annotations

from ..model import Tokens


def seconds(value: float | None) -> str:
    if value is None:
        return ""
    if value < 1:
        return f"{max(0, round(value * 1000))} ms"
    if value < 60:
        return f"{value:.2f} s" if value < 10 else f"{value:.1f} s"
    minutes = int(value // 60)
    return f"{minutes} min {round(value - minutes * 60)} s"


def money(cost: float | None) -> str:
    if cost is None:
        return "cost unknown"
    if cost == 0:
        return "$0"
    return f"${cost:.4f}" if cost < 0.01 else f"${cost:.2f}"


def usage(tokens: Tokens, cost: float | None, model: str | None) -> str:
    """``1,234 in · 56 out · $0.0012 · model`` (≈ when the counts are estimated)."""
    approx = "≈" if tokens.estimated else ""
    bits = [f"{approx}{tokens.input:,} in", f"{approx}{tokens.output:,} out"]
    if tokens.reasoning:
        bits.append(f"{tokens.reasoning:,} reasoning")
    if tokens.cache_read:
        bits.append(f"{tokens.cache_read:,} cached")
    bits.append(money(cost))
    if model:
        bits.append(model)
    return " · ".join(bits)
