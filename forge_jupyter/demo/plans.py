"""How the offline demo model computes an answer: one `sql` query (or `python` for a chart) per
intent, and the sentence it says about the tool's actual result.

Every name that goes into the SQL is quoted as an identifier (`"…"`, inner quotes doubled) or a
string literal; every name that goes into Python is a `repr`. Column names are data, never code.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from .intents import FUNC_WORDS, Intent, columns_named
from .reading import Frame, read_pairs, read_table, total_rows

MAX_LISTED = 20  # columns or groups named in a sentence
NO_VALUE = ("", "NaN", "None", "<NA>", "NaT")  # how an empty aggregate prints


@dataclass
class Plan:
    tool: str  # "sql" or "python"
    code: str  # the query, or the Python source
    doing: str  # what the call does, for the sentence before it: "count the missing values …"
    answer: Callable[[str], str]  # the tool's output → what the demo says about it
    note: str = ""  # said before the answer (a choice the demo made that the person should know)


def ident(name: str) -> str:
    """A DuckDB identifier, quoted."""
    return '"' + name.replace('"', '""') + '"'


def literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def code(value: str) -> str:
    """Markdown inline code that holds any text (backticks in data cannot close it early)."""
    value = " ".join(value.split()) or " "
    ticks = "`" * (max((len(r) for r in re.findall(r"`+", value)), default=0) + 1)
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{ticks}{pad}{value}{pad}{ticks}"


def listing(items: list[str]) -> str:
    shown = items[:MAX_LISTED]
    more = f" and {len(items) - len(shown)} more" if len(items) > len(shown) else ""
    if len(shown) == 1:
        return shown[0] + more
    return ", ".join(shown[:-1]) + (" and " if not more else ", ") + shown[-1] + more


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _unreadable(_output: str) -> str:
    return "Here is what it returned:"


def _pick(mentioned: list[str], preferred: list[str], fallback: list[str]) -> str | None:
    return next((c for c in mentioned if c in preferred), None) or (fallback[0] if fallback else None)


def plan_for(intent: Intent, frame: Frame, question: str, python: bool) -> Plan | str:
    """The call that answers `intent` about `frame` (`python`: whether that tool is offered),
    or a sentence saying why the demo cannot."""
    mentioned = columns_named(question, frame)
    table = ident(frame.name)
    f = code(frame.name)
    kind = intent.kind
    if kind == "missing":
        return _missing(frame)
    if kind == "shape":
        query = (f"SELECT count(*) AS \"rows\", (SELECT count(*) FROM (DESCRIBE SELECT * FROM "
                 f"{table})) AS \"columns\" FROM {table}")

        def shape(out: str) -> str:
            rows = read_table(out, ["rows", "columns"])
            if not rows:
                return _unreadable(out)
            return f"{f} has {plural(int(rows[0][0]), 'row')} and {plural(int(rows[0][1]), 'column')}."

        return Plan("sql", query, f"count the rows and columns of {f}", shape)
    if kind == "columns":
        query = f'SELECT column_name AS "column", column_type AS "type" FROM (DESCRIBE SELECT * FROM {table})'

        def columns(out: str) -> str:
            rows = read_table(out, ["column", "type"])
            if not rows:
                return _unreadable(out)
            named = [f"{code(c)} ({t})" for c, t in rows]
            return f"{f} has {plural(len(rows), 'column')}: {listing(named)}."

        return Plan("sql", query, f"list the columns of {f} and their types", columns)
    if kind == "describe":
        return _describe(frame, mentioned)
    if kind == "head":
        return Plan("sql", f"SELECT * FROM {table} LIMIT {intent.n}",
                    f"take the first {intent.n} rows of {f}",
                    lambda out: f"The first {plural(intent.n, 'row')} of {f}:")
    group = _pick(mentioned, frame.other, frame.other if kind == "chart" else [])
    value = _pick(mentioned, frame.numeric, frame.numeric)
    names_value = any(c in frame.numeric for c in mentioned)
    note = ""
    if value is not None and not names_value and kind in ("top", "aggregate", "chart"):
        note = f"You did not name a numeric column I know, so I used {code(value)}."
    if kind == "chart":
        if python:
            return _chart(frame, group, value, note)
        note = " ".join([note, "`python` is not offered to this agent, so I cannot draw; here "
                               "are the numbers a chart would show."]).strip()
        if group is None or value is None:
            fallback = _counts(frame, group) if group is not None else _describe(frame, mentioned)
            fallback.note = note
            return fallback
        kind = "aggregate"
    if kind == "counts" or (kind == "aggregate" and intent.func is None and group is not None
                            and not names_value):
        everything = [c for c, _ in frame.columns]
        column = group or (mentioned or frame.other or everything)[0]
        return _counts(frame, column)
    if value is None:
        return (f"{f} has no numeric column ({listing([code(c) for c, _ in frame.columns])}), "
                "so there is nothing to rank or add up.")
    if group is not None and kind in ("top", "aggregate"):
        return _ranking(frame, group, value, intent, note, limit=intent.n if kind == "top" else None)
    if kind == "top":
        order = "DESC" if intent.descending else "ASC"
        query = f"SELECT * FROM {table} ORDER BY {ident(value)} {order} NULLS LAST LIMIT {intent.n}"
        word = "top" if intent.descending else "bottom"

        def top(out: str) -> str:
            names = [c for c, _ in frame.columns]
            rows = read_table(out, names)
            if not rows:
                return _unreadable(out)
            values = [r[names.index(value)] for r in rows]
            return (f"The {word} {plural(len(rows), 'row')} of {f} by {code(value)} have "
                    f"{code(value)} {listing(values)}:")

        return Plan("sql", query, f"take the {word} {intent.n} rows of {f} by {code(value)}", top, note)
    func = intent.func or ("max" if intent.descending else "min")
    label = f"{FUNC_WORDS[func]} {value}"
    query = f"SELECT {func}({ident(value)}) AS {ident(label)} FROM {table}"

    def aggregate(out: str) -> str:
        rows = read_table(out, [label])
        if not rows:
            return _unreadable(out)
        return f"The {FUNC_WORDS[func]} of {code(value)} in {f} is **{rows[0][0]}**."

    return Plan("sql", query, f"compute the {FUNC_WORDS[func]} of {code(value)} in {f}", aggregate, note)


def _missing(frame: Frame) -> Plan:
    table = ident(frame.name)
    branches = [f"  SELECT {i} AS \"position\", {literal(c)} AS \"column\", count(*) - count({ident(c)}) "
                f"AS \"missing\" FROM {table}" for i, (c, _) in enumerate(frame.columns, 1)]
    query = ('SELECT "column", "missing" FROM (\n' + "\n  UNION ALL\n".join(branches)
             + '\n) ORDER BY "position"')
    f = code(frame.name)

    def missing(out: str) -> str:
        rows = read_table(out, ["column", "missing"])
        if not rows:
            return _unreadable(out)
        some = [(c, n) for c, n in rows if n not in ("0", "")]
        of = f" ({plural(frame.rows, 'row')})" if frame.rows is not None else ""
        if not some:
            return f"No column of {f}{of} has missing values: I checked all {len(rows)}."
        said = listing([f"{code(c)} has **{n}**" for c, n in some])
        rest = [code(c) for c, n in rows if (c, n) not in some]
        none = f"; {listing(rest)} {'has' if len(rest) == 1 else 'have'} none" if rest else ""
        return f"In {f}{of}, {plural(len(some), 'column')} {'has' if len(some) == 1 else 'have'} " \
               f"missing values: {said}{none}."

    return Plan("sql", query, f"count the missing values in each column of {f}", missing)


def _describe(frame: Frame, mentioned: list[str]) -> Plan:
    table = ident(frame.name)
    numeric = [c for c in mentioned if c in frame.numeric] or frame.numeric
    if numeric:
        stats = [("count", "count({})"), ("mean", "avg({})"), ("std", "stddev_samp({})"),
                 ("min", "min({})"), ("25%", "quantile_cont({}, 0.25)"), ("50%", "median({})"),
                 ("75%", "quantile_cont({}, 0.75)"), ("max", "max({})")]
        columns = numeric[:MAX_LISTED]
    else:
        stats = [("values", "count({})"), ("distinct", "count(DISTINCT {})")]
        columns = [c for c, _ in frame.columns][:MAX_LISTED]
    headers = ["column"] + [name for name, _ in stats]
    branches = [f"  SELECT {i} AS \"position\", {literal(c)} AS \"column\", "
                + ", ".join(f"{expr.format(ident(c))} AS {ident(name)}" for name, expr in stats)
                + f" FROM {table}" for i, c in enumerate(columns, 1)]
    query = (f"SELECT {', '.join(ident(h) for h in headers)} FROM (\n"
             + "\n  UNION ALL\n".join(branches) + '\n) ORDER BY "position"')
    f = code(frame.name)

    def describe(out: str) -> str:
        rows = read_table(out, headers)
        if not rows:
            return _unreadable(out)
        if numeric:
            said = [f"{code(r[0])}: {r[1]} values, mean **{r[2]}**, min {r[4]}, max {r[8]}" for r in rows[:3]]
        else:
            said = [f"{code(r[0])}: {r[1]} values, {r[2]} distinct" for r in rows[:3]]
        return f"A summary of {f} — " + "; ".join(said) + ". The whole table:"

    kind = "numeric columns" if numeric else "columns (none is numeric)"
    return Plan("sql", query, f"summarize the {kind} of {f}", describe)


def _counts(frame: Frame, column: str) -> Plan:
    count = "count" if column != "count" else "rows"
    query = (f"SELECT {ident(column)}, count(*) AS {ident(count)} FROM {ident(frame.name)} "
             f"GROUP BY {ident(column)} ORDER BY {ident(count)} DESC, {ident(column)} NULLS LAST")
    c = code(column)

    def counts(out: str) -> str:
        rows = read_table(out, [column, count])
        if not rows:
            return _unreadable(out)
        distinct = total_rows(out) or len(rows)
        top = rows[0]
        return (f"{c} has {plural(distinct, 'distinct value')}; the most common is "
                f"{code(top[0])} ({plural(int(top[1]), 'row')}).")

    return Plan("sql", query, f"count the values of {c} in {code(frame.name)}", counts)


def _ranking(frame: Frame, group: str, value: str, intent: Intent, note: str,
             limit: int | None) -> Plan:
    func = intent.func or "sum"
    label = f"{FUNC_WORDS[func]} {value}"
    order = "DESC" if intent.descending else "ASC"
    # Rows without a group are left out, as pandas' groupby does: "the lowest city is NaN"
    # would answer nothing.
    query = (f"SELECT {ident(group)}, {func}({ident(value)}) AS {ident(label)} FROM {ident(frame.name)} "
             f"WHERE {ident(group)} IS NOT NULL GROUP BY {ident(group)} "
             f"ORDER BY {ident(label)} {order} NULLS LAST, {ident(group)}"
             + (f" LIMIT {limit}" if limit else ""))
    word = "highest" if intent.descending else "lowest"

    def ranking(out: str) -> str:
        rows = read_table(out, [group, label])
        if not rows:
            return _unreadable(out)
        first = rows[0]
        last = next((r for r in reversed(rows) if r[1] not in NO_VALUE), first)
        groups = total_rows(out) or len(rows)
        said = (f"By {FUNC_WORDS[func]} {code(value)}, the {word} {code(group)} is "
                f"{code(first[0])} with **{first[1]}**")
        if last is not first and not limit:
            other = "lowest" if intent.descending else "highest"
            said += (f"; {code(last[0])} is the {other} with {last[1]} "
                     f"({plural(groups, code(group) + ' value')} in all)")
        return said + "."

    doing = f"rank each {code(group)} of {code(frame.name)} by its {FUNC_WORDS[func]} {code(value)}"
    return Plan("sql", query, doing, ranking, note)


def _chart(frame: Frame, group: str | None, value: str | None, note: str) -> Plan | str:
    df, f = frame.name, code(frame.name)
    if group is not None and value is not None:
        title = f"{df}: total {value} by {group}"
        source = (f"# chart: {title}\n"
                  f"totals = {df}.groupby({group!r})[{value!r}].sum(min_count=1).sort_values(ascending=False)\n"
                  f"totals.plot.bar(title={title!r}, ylabel={value!r}, rot=0)\n"
                  f"print(totals.to_string())")
        what = f"a bar chart of the total {code(value)} per {code(group)}"
    elif value is not None:
        title = f"{df}: distribution of {value}"
        source = (f"# chart: {title}\n"
                  f"{df}[{value!r}].plot.hist(bins=10, title={title!r})\n"
                  f"print({df}[{value!r}].describe().to_string())")
        what = f"a histogram of {code(value)}"
    elif group is not None:
        title = f"{df}: rows per {group}"
        source = (f"# chart: {title}\n"
                  f"counts = {df}[{group!r}].value_counts()\n"
                  f"counts.plot.bar(title={title!r}, rot=0)\n"
                  f"print(counts.to_string())")
        what = f"a bar chart of the rows per {code(group)}"
    else:
        return f"{f} has no columns to draw."

    def chart(out: str) -> str:
        shown = "shown above" if "shown to the user" in out else "drawn, but there is no display here"
        pairs = [p for p in read_pairs(out, header=group) if p[1] not in NO_VALUE]
        said = f"I drew {what} with `python` ({shown})."
        if pairs and group is not None:
            said += (f" {code(pairs[0][0])} is highest with **{pairs[0][1]}**"
                     + (f"; {code(pairs[-1][0])} is lowest with {pairs[-1][1]}." if len(pairs) > 1 else "."))
        return said + " What it printed:"

    return Plan("python", source, f"draw {what}", chart, note)
