"""What the offline demo model understands: the kinds of question, by keyword.

`classify` maps a question to an Intent (or None: the demo does not know it); `columns_named`
finds the DataFrame's columns a question mentions. Deterministic: the same words, the same
intent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from .reading import IDENTIFIER, Frame

Kind = Literal["inventory", "chart", "missing", "shape", "describe", "counts", "head", "top",
               "aggregate", "columns"]

NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                "eight": 8, "nine": 9, "ten": 10, "twenty": 20}
_N = r"(\d{1,3}|" + "|".join(NUMBER_WORDS) + r")"

# Tried in this order; the first that matches decides.
PATTERNS: tuple[tuple[Kind, str], ...] = (
    ("inventory", r"\bwhat (data|variables|dataframes|frames) (do i have|are there)|"
                  r"\bwhat do i have\b|\blist (my |the |all )?(variables|dataframes)\b|"
                  r"\bwhat('s| is) in (my|the|this) (notebook|namespace|kernel)\b"),
    ("chart", r"\b(plot|chart|graph|visuali[sz]|histogram|draw)"),
    ("missing", r"\b(missing|nulls?|nans?|n/a|blanks?|empty (values|cells))\b"),
    ("shape", r"\b(how many (rows|columns|records|entries|lines)|number of (rows|columns|records)"
              r"|row count|shape|how (big|large) is|size of)\b"),
    ("describe", r"\b(describe|summary|summari[sz]e|statistics|stats|overview)\b"),
    ("counts", r"\b(value[ _]counts?|how many of each|counts? (per|by|of each)|distribution|"
               r"frequenc|how often|breakdown|unique|distinct|most (common|frequent))"),
    ("head", rf"\b(first {_N} rows|head)\b"),
    ("top", rf"\b(top|bottom) {_N}\b|\b{_N} (largest|highest|biggest|smallest|lowest)\b"),
    ("aggregate", r"\b(mean|average|avg|median|max|maximum|min|minimum|highest|lowest|largest|"
                  r"smallest|biggest|most|least|sum|total)\b"),
    ("columns", r"\b(columns?|dtypes?|types?|fields|schema)\b"),
)

FUNCS = (("avg", r"\b(mean|average|avg)\b"), ("median", r"\bmedian\b"), ("sum", r"\b(sum|total)\b"),
         ("max", r"\b(max|maximum)\b"), ("min", r"\b(min|minimum)\b"))
LOW = r"\b(lowest|smallest|least|min|minimum|bottom|worst|fewest)\b"
HIGH = r"\b(highest|largest|biggest|most|max|maximum|top|best)\b"
FUNC_WORDS = {"avg": "mean", "median": "median", "sum": "total", "max": "maximum", "min": "minimum"}


@dataclass(frozen=True)
class Intent:
    kind: Kind
    n: int = 5  # head/top: how many rows
    func: str | None = None  # aggregate: avg, median, sum, max, min — None: from the direction
    descending: bool = True  # top/aggregate: highest first


def classify(question: str) -> Intent | None:
    q = " ".join(question.lower().split())
    kind = next((k for k, pattern in PATTERNS if re.search(pattern, q)), None)
    if kind is None:
        return None
    n = 5
    counted = re.search(rf"\b(?:top|bottom|first) {_N}\b|\b{_N} (?:largest|highest|biggest|"
                        rf"smallest|lowest)\b", q)
    if counted:
        token = counted[1] or counted[2]
        n = int(token) if token.isdigit() else NUMBER_WORDS[token]
    func = next((name for name, pattern in FUNCS if re.search(pattern, q)), None)
    low = re.search(LOW, q)
    high = re.search(HIGH, q)
    descending = not low or bool(high and high.start() < low.start())
    return Intent(kind, max(1, min(n, 100)), func, descending)


def names_in_backticks(question: str) -> list[str]:
    """Identifiers the person quoted: `sales` (the usual way to name a variable)."""
    return [n for n in re.findall(r"`([^`\n]{1,100})`", question) if IDENTIFIER.match(n)]


def words(question: str) -> set[str]:
    return set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", question))


def columns_named(question: str, frame: Frame) -> list[str]:
    """The frame's columns the question mentions, in the order it mentions them (a plural
    `regions` or a spaced `unit price` for `unit_price` count too)."""
    q = question.lower()
    found = []
    for column, _ in frame.columns:
        spellings = {column.lower(), column.lower().replace("_", " ")}
        at = [m.start() for s in spellings if s.strip()
              for m in re.finditer(r"(?<![\w])" + re.escape(s) + r"(?:e?s)?(?![\w])", q)]
        if at:
            found.append((min(at), column))
    return [c for _, c in sorted(found)]


def choose_frame(question: str, frames: list[Frame]) -> Frame | None:
    """The DataFrame a question is about: one it names; else the inspected one whose columns it
    mentions most (the most recent on a tie); else the one inspected last (a follow-up); else
    the only one known. None when that leaves a choice to guess."""
    named = [f for f in frames if f.name in names_in_backticks(question) or f.name in words(question)]
    if named:
        return named[-1]
    inspected = [f for f in frames if f.inspected]
    if inspected:
        return max(enumerate(inspected), key=lambda s: (len(columns_named(question, s[1])), s[0]))[1]
    return frames[0] if len(frames) == 1 else None
