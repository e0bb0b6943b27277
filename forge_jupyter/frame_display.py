"""How a history frame shows itself to a person: the columns a person reads, ids shortened,
long text on one line — while the DataFrame keeps every column and every full value.

``sessions()`` and ``history()`` return a ``ReadableFrame``: a pandas DataFrame in every
respect (``df.columns`` lists every column, ``df.session_id`` holds full ids, ``to_string()``
and ``to_html()`` print everything) whose notebook display and ``repr`` show a chosen subset.
Rows taken from it (``head``, a filter, ``sort_values``) display the same way; a frame whose
columns were changed (selected, added, dropped) displays as a plain DataFrame, all of it — the
person made that shape and sees it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd

from .ids import short


@dataclass(frozen=True)
class Display:
    """Which columns a frame shows, and how."""

    shown: tuple[str, ...]  # the columns shown, in order
    # columns shown only when some row says something: hidden while every value is this one
    # (None: missing) — a name no session has, visible_to_model when nothing is superseded
    unless_all: Mapping[str, object] = field(default_factory=dict)
    ids: tuple[str, ...] = ()  # shown short (ids.short)
    one_line: Mapping[str, int] = field(default_factory=dict)  # text: one line, at most n chars
    money: tuple[str, ...] = ()  # dollars, "unknown" where the price table had none
    columns: tuple[str, ...] = ()  # every column of the frame as forge made it (set by ``of``)


def one_line(value: object, limit: int) -> str:
    """``value`` on one line (whitespace runs made one space), cut to ``limit`` with "…"."""
    if _missing(value):
        return ""
    flat = " ".join(str(value).split())
    return flat if len(flat) <= limit else flat[:limit - 1].rstrip() + "…"


def _missing(value: object) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def _money(value: object) -> str:
    from .render.numbers import money

    if _missing(value):
        return "unknown"
    cost = float(value)  # type: ignore[arg-type]
    return "<$0.0001" if 0 < cost < 0.00005 else money(cost)  # not "$0.0000" for a real cost


# What sessions() and history() show a person; the frames hold everything.
SESSIONS_DISPLAY = Display(
    ("session_id", "name", "title", "models", "model", "agent", "messages", "tokens_input",
     "tokens_output", "cost", "updated_at", "forked_from_session"),
    unless_all={"name": None, "model": None, "agent": "build", "forked_from_session": None},
    ids=("session_id", "forked_from_session"), one_line={"title": 60}, money=("cost",),
)
HISTORY_DISPLAY = Display(
    ("pos", "message_id", "role", "summary", "status", "text", "tool_calls", "tokens_input",
     "tokens_output", "cost", "visible_to_model"),
    unless_all={"summary": False, "status": "completed", "tool_calls": 0,
                "visible_to_model": True},
    ids=("message_id",), one_line={"text": 60}, money=("cost",),
)


_NOWRAP = "<style>table.forge-frame td, table.forge-frame th { white-space: nowrap; }</style>"


class ReadableFrame(pd.DataFrame):
    """A DataFrame that displays the columns a person reads (see the module's docstring)."""

    _metadata = ["_display"]
    _display: Display | None = None

    @property
    def _constructor(self) -> type[ReadableFrame]:
        return ReadableFrame

    @classmethod
    def of(cls, frame: pd.DataFrame, display: Display) -> ReadableFrame:
        out = cls(frame)
        out._display = replace(display, columns=tuple(frame.columns))
        return out

    def shown(self) -> pd.DataFrame | None:
        """What the display shows (a plain DataFrame of display strings and numbers), or None
        when this frame's columns are no longer the ones forge made (then all is shown)."""
        d = self._display
        if d is None or tuple(self.columns) != d.columns:
            return None
        plain = pd.DataFrame(self)
        columns = [c for c in d.shown if c not in d.unless_all or _says_something(plain[c], d.unless_all[c])]
        out = pd.DataFrame({c: plain[c] for c in columns}, index=plain.index)
        for c in columns:
            if c in d.ids:
                out[c] = [("" if _missing(v) else short(str(v))) for v in out[c]]
            elif c in d.one_line:
                out[c] = [one_line(v, d.one_line[c]) for v in out[c]]
            elif c in d.money:
                out[c] = [_money(v) for v in out[c]]
            elif isinstance(out[c].dtype, pd.DatetimeTZDtype):
                out[c] = [("" if _missing(v) else v.strftime("%Y-%m-%d %H:%M UTC"))
                          for v in out[c].dt.tz_convert("UTC")]
            elif pd.api.types.is_string_dtype(out[c].dtype):
                out[c] = out[c].astype(object).where(out[c].notna(), "")
        return out

    def _note(self, shown: pd.DataFrame) -> str:
        """What the display leaves out, and where the rest is."""
        return (f"{len(shown.columns)} of {len(self.columns)} columns shown, ids shortened: the "
                "DataFrame holds every column and the full ids (df.columns, df.to_string())")

    def __repr__(self) -> str:
        shown = self.shown()
        if shown is None:
            return super().__repr__()
        with _whole_cells():
            text = repr(shown)
        return f"{text}\n({self._note(shown)})"

    def _repr_html_(self) -> str | None:
        shown = self.shown()
        if shown is None:
            return super()._repr_html_()
        with _whole_cells():
            html = shown._repr_html_()
        if html is None:
            return None
        # Cells never wrap: squeezed into a narrow output, a table would otherwise fold its text
        # column into a thin column of one word per line; a wide one scrolls instead. pandas
        # escapes every cell; the class, the style and the note are forge's own text.
        html = html.replace('<table border="1" class="dataframe">',
                            '<table border="1" class="dataframe forge-frame">', 1)
        return (f"{_NOWRAP}{html}"
                f'<p class="forge-frame-note"><small>{self._note(shown)}</small></p>')


def _says_something(column: pd.Series, usual: Any) -> bool:
    """False when every value is ``usual`` (None: every value missing)."""
    if usual is None:
        return bool(column.notna().any())
    return any(not _missing(v) and v != usual for v in column)


def _whole_cells() -> Any:
    """pandas cuts cells at ``display.max_colwidth`` (50) and, in a terminal, drops columns
    that do not fit its width; the cells shown are already cut to their own width
    (``one_line``) and the columns are the few a person reads: show them all (a text repr
    wider than the terminal wraps into blocks, as pandas does)."""
    return pd.option_context("display.max_colwidth", None, "display.max_columns", None)
