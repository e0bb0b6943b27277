"""Durations, money and token counts as a person reads them (shared by the record, the text
stream and the widget's text mode; the live widget's labextension/src/render/words.ts says the same).
Durations and money live on the ground floor (``forge_jupyter.amounts``) for the message's repr."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..amounts import money, seconds
from ..message import STATUS_WORDS

if TYPE_CHECKING:
    from ..message import Tokens

__all__ = ["money", "seconds", "usage"]


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


def status_words(status: str, why: str) -> tuple[str, str]:
    """(the status word, what follows it): ("Error", ": the model server failed"), and a reason
    that already starts with the word said once — ("Stopped", " by the user"), not "Stopped:
    stopped by the user"."""
    word = STATUS_WORDS[status]
    if why.lower().startswith(word.lower()):
        rest = why[len(word):]
        return word, rest if rest[:1] in (" ", ":", "") else f": {why}"
    return word, f": {why}"
