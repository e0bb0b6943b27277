"""The DataFrames' own SELECTs (frames.py, written in DuckDB's SQL) in PostgreSQL's dialect,
for a PostgreSQL store's ``selecting`` (postgres/select.py).

The views themselves are not translated: they are written once with the spellings of
sql/dialect.py and rendered for each engine. The DataFrames' queries over them are
translated here, by the same rules as those spellings:

- ``x ->> '$.key'`` (DuckDB's JSON path) becomes ``x ->> 'key'``;
- ``TRY_CAST(x AS BIGINT | BOOLEAN)`` becomes ``forge_try_bigint(x)`` / ``forge_try_boolean(x)``
  (functions of the schema's, postgres/schema.py);
- ``json_extract_string(x, ['$.a', '$.b'])`` becomes ``ARRAY[x ->> 'a', x ->> 'b']``,
  ``strlen`` becomes ``octet_length``;
- ``arg_max(a, b)`` becomes the second element of the greatest ``ARRAY[b, a]`` among the rows
  whose ``b`` is not NULL, also as a window function (``… OVER w``);
- ``contains(a, b)`` becomes ``strpos(a, b) > 0``, and ``forge_icu_lower(x)`` (the panel's
  search) ``lower`` under the ICU root collation.

``tests/frames/test_postgres_frames.py`` compares the DataFrames' rows with DuckDB's.
"""

from __future__ import annotations

import re

_PATH = re.compile(r"->>\s*'\$\.([A-Za-z_][A-Za-z0-9_]*)'")
_LIST = re.compile(r"json_extract_string\(([^,()]+),\s*\[([^\]]*)\]\)")


def _closing(text: str, start: int) -> int:
    """The index of the parenthesis closing the one opened just before ``start``."""
    depth = 1
    for i in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            return i
    raise ValueError(f"unbalanced parentheses in a view: {text[start - 20:start + 40]!r}")


def _split_top(args: str) -> list[str]:
    """``args`` split at its top-level commas."""
    out, depth, last = [], 0, 0
    for i, ch in enumerate(args):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            out.append(args[last:i].strip())
            last = i + 1
    out.append(args[last:].strip())
    return out


def _calls(text: str, name: str, rewrite) -> str:  # noqa: ANN001 - (args, rest) -> (new, eaten)
    """Every call of ``name(…)`` in ``text`` replaced by ``rewrite(args, text after it)``,
    which returns the new text and how much of the following text it took in."""
    pattern = re.compile(rf"\b{name}\(", re.IGNORECASE)
    while (m := pattern.search(text)) is not None:
        end = _closing(text, m.end())
        new, eaten = rewrite(_split_top(text[m.end():end]), text[end + 1:])
        text = text[:m.start()] + new + text[end + 1 + eaten:]
    return text


def _try_cast(args: list[str], rest: str) -> tuple[str, int]:
    expr, _, kind = args[0].rpartition(" AS ")
    return f"forge_try_{kind.strip().lower()}({expr.strip()})", 0


_OVER = re.compile(r"\s+OVER\s+[A-Za-z_][A-Za-z0-9_]*")


def _arg_max(args: list[str], rest: str) -> tuple[str, int]:
    value, key = args
    over = _OVER.match(rest)
    window = over.group(0) if over else ""
    return (f"(max(ARRAY[{key}, {value}]) FILTER (WHERE {key} IS NOT NULL){window})[2]",
            len(window))


def to_postgres(sql: str) -> str:
    """A view's DuckDB SQL (views.py) in PostgreSQL's dialect."""
    sql = _LIST.sub(lambda m: "ARRAY[" + ", ".join(
        f"{m.group(1)} ->> '{p.strip()[3:-1]}'" for p in m.group(2).split(",")) + "]", sql)
    sql = _PATH.sub(r"->> '\1'", sql)
    sql = re.sub(r"\bstrlen\(", "octet_length(", sql)
    sql = _calls(sql, "TRY_CAST", _try_cast)
    sql = _calls(sql, "contains", lambda a, _: (f"(strpos({a[0]}, {a[1]}) > 0)", 0))
    # forge's own lower-casing by Unicode's rules, whatever the database's locale
    sql = _calls(sql, "forge_icu_lower",
                 lambda a, _: (f'lower(CAST({a[0]} AS text) COLLATE "und-x-icu")', 0))
    return _calls(sql, "arg_max", _arg_max)
