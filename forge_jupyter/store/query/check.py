"""Is this SQL one read-only query? Decided from what DuckDB parses, never from the first word.

SQL written by a person (``forge.sql``, ``%forge sql``) or by the model (the ``sql`` tool) is
untrusted. Measured with DuckDB 2.0, a statement's first word says little about what it does:

- ``EXPLAIN ANALYZE COPY (…) TO 'x.csv'`` is an EXPLAIN statement that runs the COPY inside;
- ``WITH x AS (COPY … TO 'x.csv') SELECT 1`` and ``WITH x AS (DELETE FROM t RETURNING *)
  SELECT 1`` are SELECT statements, and they write;
- ``query('…')`` and ``json_execute_serialized_sql(…)`` run SQL text given as a string.

So ``check_select`` asks DuckDB's parser: exactly one statement, of type SELECT, whose parse
tree (``json_serialize_sql``) holds only query nodes that read (SELECT, set operations,
CTEs) and no function that runs SQL text. EXPLAIN is refused outright: it may be ANALYZE.
This is one layer; the connection the query then runs in (store/query/sandbox.py) cannot write
files nor reach another tenant's rows whatever the text says.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...errors import ForgeError

if TYPE_CHECKING:
    import duckdb


class ReadOnlySQL(ForgeError, ValueError):
    """A statement that is not exactly one read-only SELECT."""


# Query nodes that only read. Anything else in the tree (COPY_QUERY_NODE, INSERT_QUERY_NODE,
# UPDATE_QUERY_NODE, DELETE_QUERY_NODE, …, and whatever a later DuckDB adds) is refused.
READING_NODES = frozenset({"SELECT_NODE", "SET_OPERATION_NODE", "RECURSIVE_CTE_NODE", "CTE_NODE"})
# Functions whose argument is SQL text: what they run was never checked here.
SQL_TEXT_FUNCTIONS = frozenset({"query", "json_execute_serialized_sql"})


@dataclass(frozen=True, slots=True)
class Checked:
    """One read-only SELECT: its text (no trailing semicolon) and DuckDB's parse tree of it."""

    text: str
    tree: dict[str, Any]


_parser: duckdb.DuckDBPyConnection | None = None  # parses only; never sees a table
_parser_lock = threading.Lock()


def _forget_parser_in_child() -> None:
    global _parser, _parser_lock
    _parser, _parser_lock = None, threading.Lock()  # DuckDB is not fork-safe


os.register_at_fork(after_in_child=_forget_parser_in_child)


def _parse(query: str) -> tuple[list[str], str, dict[str, Any] | None]:
    """(the type of each statement of ``query``, the first one's text, its parse tree when
    it is alone). A ValueError for a statement type the Python client cannot name."""
    global _parser
    import duckdb

    with _parser_lock:
        if _parser is None:
            _parser = duckdb.connect(":memory:", config={
                "autoinstall_known_extensions": False, "autoload_known_extensions": False})
        statements = _parser.extract_statements(query)
        kinds = [s.type.name for s in statements]
        if len(statements) != 1:
            return kinds, "", None
        text = statements[0].query
        [(tree,)] = _parser.execute("SELECT json_serialize_sql(?)", [text]).fetchall()
    return kinds, text, json.loads(tree)


def _article(word: str) -> str:
    return "an" if word[:1] in "AEIOU" else "a"


def check_select(query: str, *, who: str, advice: str) -> Checked:
    """``query`` if it is exactly one read-only SELECT, else ``ReadOnlySQL`` saying what it
    holds. ``who`` names the runner in the message ("forge SQL"), ``advice`` what to do."""
    import duckdb

    def refuse(finding: str) -> ReadOnlySQL:
        return ReadOnlySQL(f"{who} runs exactly one read-only SELECT (or WITH … SELECT) "
                           f"statement; {finding}. {advice}")

    if not isinstance(query, str):
        raise refuse(f"it was given {type(query).__name__}, not SQL text")
    try:
        kinds, text, tree = _parse(query)
    except duckdb.Error as exc:
        raise refuse(f"this does not parse ({exc})") from None
    except ValueError:  # a statement type the Python client cannot name (UPDATE EXTENSIONS)
        raise refuse("this holds a statement DuckDB's client cannot classify") from None
    if not kinds:
        raise refuse("this is empty")
    if len(kinds) > 1:
        raise refuse(f"this holds {len(kinds)} statements ({', '.join(kinds)}): send one")
    if kinds[0] == "EXPLAIN":
        raise refuse("this is an EXPLAIN statement, refused because EXPLAIN ANALYZE runs the "
                     "statement it explains")
    if kinds[0] != "SELECT":
        raise refuse(f"this is {_article(kinds[0])} {kinds[0]} statement")
    if tree is None or tree.get("error"):
        reason = (tree or {}).get("error_message", "no parse tree")
        raise refuse(f"this SELECT could not be checked ({reason})")
    for node in nodes(tree):
        kind = node.get("type")
        if isinstance(kind, str) and kind.endswith("_NODE") and kind not in READING_NODES:
            what = kind.removesuffix("_NODE").removesuffix("_QUERY")
            raise refuse(f"this SELECT holds {_article(what)} {what} (inside a WITH clause), "
                         "which writes")
        if node.get("class") == "FUNCTION" and str(node.get("function_name", "")).lower() \
                in SQL_TEXT_FUNCTIONS:
            raise refuse(f"{node['function_name']}() runs SQL text that is not checked; write "
                         "that query itself instead")
    return Checked(text.rstrip().rstrip(";").rstrip(), tree)


def nodes(tree: Any) -> Iterator[dict[str, Any]]:
    """Every object of a parse tree (``Checked.tree``), depth first."""
    stack = [tree]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            yield item
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)

