"""A comparison's result: a DataFrame, one row per model, shown as answers side by side.

``Comparison`` is a pandas DataFrame (filter it, sort it, ``to_csv`` it) whose notebook view is
the answers in columns with their figures under them (``_repr_html_``); anything derived from it
(a slice, a sort) is a plain DataFrame again. ``use(model)`` gives the fork a model ran in, to
go on with it; in a notebook the view's "Continue here" does the same with one click
(notebook/compare_view.py). Imported only when a comparison runs: it imports pandas.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

from .errors import NotFound
from .ids import short
from .session.compare import Column

ANSWER_SHOWN = 20_000  # characters of an answer in the view; the frame keeps all of it
COLUMNS = ("model", "answer", "status", "finish", "steps", "tool_calls", "tokens_in",
           "tokens_out", "cost", "first_token_s", "latency_s", "session_id", "error", "replayed")


class Comparison(pd.DataFrame):
    _metadata = ["runs", "on_use", "view"]

    @property
    def _constructor(self) -> Callable[..., pd.DataFrame]:
        return pd.DataFrame  # a slice or a sort of a comparison is just a frame

    def use(self, model: str) -> Any:
        """The fork ``model`` ran in (a Session), to prompt on from there; in a notebook it also
        becomes the notebook's current session."""
        for column in getattr(self, "runs", ()):
            if column.model == model and column.session is not None:
                if self.on_use is not None:
                    self.on_use(column.session)
                return column.session
        models = ", ".join(c.model for c in getattr(self, "runs", ()))
        raise NotFound(f"no fork for model {model!r} in this comparison (models: {models})")

    def _repr_html_(self) -> str:
        return side_by_side(self)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Any:
        """In a notebook kernel, the view with its "Continue here" (notebook/compare_view.py);
        elsewhere None, and the HTML above shows."""
        view = getattr(self, "view", None)
        return view._repr_mimebundle_() if view is not None else None


def compare(forge: Any, prompt: str, models: Sequence[str] | str, session: Any = None,
            **options: Any) -> Comparison:
    """``Forge.compare``: in ``session`` (a Session, a name or id; default: a new one)."""
    from .session.compare import compare_async
    from .session.prompt import run_sync
    from .session.session import Session

    target = session if isinstance(session, Session) else forge.session(session)
    return comparison_of(run_sync(lambda: compare_async(target, prompt, models, **options)))


def comparison_of(columns: Sequence[Column],
                  on_use: Callable[[Any], None] | None = None) -> Comparison:
    frame = Comparison([c.figures() for c in columns], columns=list(COLUMNS))
    frame.runs = list(columns)
    frame.on_use = on_use
    frame.view = None
    return frame


def _figure(value: Any, unit: str = "", digits: int = 2) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}f}{unit}"
    return f"{value}{unit}"


def side_by_side(frame: Comparison, *, buttons: bool = False) -> str:
    """The answers in columns, the figures under them. Every value from a model or a store is
    escaped: an answer is text, never markup the page would run."""
    e = html.escape
    cells, figures = [], []
    rows = [c.figures() for c in frame.runs]  # the values as made, not as pandas typed them
    for row in rows:
        answer = row["answer"] or ""
        if len(answer) > ANSWER_SHOWN:
            answer = answer[:ANSWER_SHOWN] + f"\n… ({len(row['answer']) - ANSWER_SHOWN:,} more characters in the frame's answer column)"
        body = (f'<div class="forge-compare-error">{e(row["error"])}</div>' if row["error"]
                else f'<div class="forge-compare-answer">{e(answer)}</div>')
        cells.append(f'<td>{body}</td>')
        sid = row["session_id"]
        use = ""
        if sid:
            hint = f"%forge use {short(sid)}"
            use = (f'<button class="forge-compare-use" data-forge-use="{e(sid)}" '
                   f'title="{e(hint)}">Continue here</button>' if buttons else
                   f'<code>{e(hint)}</code>')
        cost = "—" if row["cost"] is None else f"${row['cost']:.4f}"
        figures.append(
            "<td><dl>"
            f"<dt>status</dt><dd>{e(str(row['status']))}</dd>"
            f"<dt>steps · tool calls</dt><dd>{row['steps']} · {row['tool_calls']}</dd>"
            f"<dt>tokens in / out</dt><dd>{row['tokens_in']:,} / {row['tokens_out']:,}</dd>"
            f"<dt>cost</dt><dd>{cost}</dd>"
            f"<dt>first token · total</dt><dd>{_figure(row['first_token_s'], ' s')} · "
            f"{_figure(row['latency_s'], ' s')}</dd>"
            f"<dt>session</dt><dd>{e(short(sid)) if sid else '—'}</dd>"
            f"</dl>{use}</td>")
    heads = "".join(f"<th>{e(str(r['model']))}{' (replayed)' if r['replayed'] else ''}</th>"
                    for r in rows)
    return (
        '<div class="forge-compare">'
        f'<table><thead><tr>{heads}</tr></thead><tbody>'
        f'<tr class="forge-compare-answers">{"".join(cells)}</tr>'
        f'<tr class="forge-compare-figures">{"".join(figures)}</tr>'
        "</tbody></table></div>"
        f"<style>{STYLE}</style>"
    )


# Theme variables of JupyterLab with fallbacks, so the view reads in light and dark and in a
# saved notebook opened elsewhere.
STYLE = """
.forge-compare table{border-collapse:collapse;table-layout:fixed;width:100%}
.forge-compare th,.forge-compare td{vertical-align:top;padding:6px 10px;text-align:left;
 border:1px solid var(--jp-border-color2,#ddd)}
.forge-compare th{font-weight:600}
.forge-compare-answer,.forge-compare-error{white-space:pre-wrap;max-height:24em;overflow:auto;
 font-family:var(--jp-content-font-family,inherit)}
.forge-compare-error{color:var(--jp-error-color1,#b00)}
.forge-compare dl{display:grid;grid-template-columns:auto 1fr;gap:2px 10px;margin:0 0 6px;
 font-size:var(--jp-ui-font-size0,11px);color:var(--jp-ui-font-color2,#555)}
.forge-compare dt{font-weight:600}.forge-compare dd{margin:0}
.forge-compare-use.forge-compare-chosen{font-weight:600}
"""
