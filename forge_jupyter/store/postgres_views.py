"""The documented views (store/views.py) in PostgreSQL's dialect, for people using psql.

forge-jupyter itself never reads these: its DataFrames and ``forge.sql`` run the DuckDB SQL of
views.py on a copy of the tenant's rows (sandbox.py), so the dialect, columns and dtypes are
the same on every backend. These views are for a DBA or a person connected with psql as a
role pinned to its tenant: the same names and columns, created ``security_invoker`` so that
the row-level security policies of the tables apply to whoever queries them.

One text per view, translated from views.py's — the views are written once:

- ``x ->> '$.key'`` (DuckDB's JSON path) becomes ``x ->> 'key'``;
- ``TRY_CAST(x AS BIGINT | BOOLEAN)`` becomes ``forge_try_bigint(x)`` / ``forge_try_boolean(x)``
  (NULL where the text does not parse, as DuckDB's);
- ``json_extract_string(x, ['$.a', '$.b'])`` becomes ``ARRAY[x ->> 'a', x ->> 'b']`` (both
  index from 1), ``strlen`` becomes ``octet_length``;
- ``arg_max(a, b)`` — PostgreSQL has none — becomes the second element of the greatest
  ``ARRAY[b, a]`` among the rows whose ``b`` is not NULL (``b`` and ``a`` of one type), also as
  a window function (``… OVER w``);
- ``contains(a, b)`` becomes ``strpos(a, b) > 0`` (both take ``b`` literally), and
  ``forge_icu_lower(x)`` (the panel's search) ``lower`` under the ICU root collation
  (``epoch_us`` is a function of the schema's, postgres_schema.py).

``tests/frames/test_postgres_frames.py`` compares every view's rows with DuckDB's.
"""

from __future__ import annotations

import re

from .sql.views import VIEWS

# functions the translated views call; owned by the schema's owner, run by anyone
FUNCTIONS = (
    """
    CREATE FUNCTION forge_try_bigint(t text) RETURNS bigint
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog AS $$
    BEGIN RETURN t::bigint; EXCEPTION WHEN others THEN RETURN NULL; END $$
    """,
    """
    CREATE FUNCTION forge_try_boolean(t text) RETURNS boolean
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog AS $$
    BEGIN RETURN t::boolean; EXCEPTION WHEN others THEN RETURN NULL; END $$
    """,
)

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


CREATE_VIEWS: tuple[str, ...] = FUNCTIONS + tuple(
    f"CREATE VIEW {v.name} WITH (security_invoker = true) AS\n{to_postgres(v.sql).strip()}"
    for v in VIEWS
)
VIEW_NAMES: tuple[str, ...] = tuple(v.name for v in VIEWS)
