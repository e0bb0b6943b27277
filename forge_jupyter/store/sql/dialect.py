"""The few spellings in which DuckDB's SQL and PostgreSQL's differ, one function per difference.

The views (views.py) are written once, calling these where the engines part: reading a JSON
field as text (DuckDB's path ``'$.key'``, PostgreSQL's key), reading one as a number or a
boolean that may not parse (DuckDB's ``TRY_CAST``; PostgreSQL has none, so the schema defines
``forge_try_bigint`` / ``forge_try_boolean``, postgres/schema.py), the byte length of a text,
and ``arg_max`` (PostgreSQL has none: the second element of the greatest ``ARRAY[key, value]``
among the rows whose key is not NULL, also as a window function). Everything else in the views
is SQL both engines read alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# The SQL a store's ``reading()`` connection speaks (``Store.dialect``): DuckDB's (the DuckDB
# file; the in-memory store's scratch DuckDB) or PostgreSQL's
Dialect = Literal["duckdb", "postgresql"]


@dataclass(frozen=True, slots=True)
class Spelling:
    """How one engine spells the constructs the shared SQL cannot write portably."""

    dialect: Dialect

    def json_text(self, value: str, key: str) -> str:
        """The text at ``key`` of a JSON value; NULL where it is missing."""
        return f"{value} ->> '$.{key}'" if self.dialect == "duckdb" else f"{value} ->> '{key}'"

    def json_texts(self, value: str, keys: tuple[str, ...]) -> str:
        """A list of the texts at ``keys`` (both engines index it from 1)."""
        if self.dialect == "duckdb":
            return f"json_extract_string({value}, [{', '.join(f'{chr(39)}$.{k}{chr(39)}' for k in keys)}])"
        return "ARRAY[" + ", ".join(self.json_text(value, k) for k in keys) + "]"

    def _try(self, value: str, key: str, sql_type: str) -> str:
        if self.dialect == "duckdb":
            return f"TRY_CAST({self.json_text(value, key)} AS {sql_type.upper()})"
        return f"forge_try_{sql_type}({self.json_text(value, key)})"

    def json_bigint(self, value: str, key: str) -> str:
        """The integer at ``key``; NULL where it is missing or not an integer."""
        return self._try(value, key, "bigint")

    def json_boolean(self, value: str, key: str) -> str:
        """The boolean at ``key``; NULL where it is missing or not a boolean."""
        return self._try(value, key, "boolean")

    def strlen(self, text: str) -> str:
        """The length of ``text`` in bytes (UTF-8)."""
        return f"strlen({text})" if self.dialect == "duckdb" else f"octet_length({text})"

    def arg_max(self, value: str, key: str, *, over: str | None = None) -> str:
        """``value`` of the row with the greatest ``key``; over the window ``over`` if named."""
        window = f" OVER {over}" if over else ""
        if self.dialect == "duckdb":
            return f"arg_max({value}, {key}){window}"
        return f"(max(ARRAY[{key}, {value}]) FILTER (WHERE {key} IS NOT NULL){window})[2]"


DUCKDB = Spelling("duckdb")
POSTGRESQL = Spelling("postgresql")
SPELLINGS: dict[Dialect, Spelling] = {"duckdb": DUCKDB, "postgresql": POSTGRESQL}
