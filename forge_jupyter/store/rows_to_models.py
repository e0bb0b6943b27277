"""Messages built from the store's own typed columns, without validating them a second time.

A message row's columns were typed and constrained by DuckDB when the row was written (VARCHAR,
BIGINT, BOOLEAN, DOUBLE, NOT NULL): pydantic would only copy them into a new object, at about a
microsecond per model. So a read builds ``Message``, ``Tokens`` and ``ErrorInfo`` objects as
pydantic's validator would have: the same ``__dict__`` (field order, values, types), the same
``model_fields_set`` (every field, as validating a complete row gives), no extras, no private
state — so equality, ``model_dump()``, ``repr`` and later assignments behave identically
(tests/store/test_trusted.py pins each object to its validated twin).

What a tampered file could put in a row that the column types cannot rule out is checked, not
trusted, and what is not a plain column is still validated:

- the result's column types are compared with what this module expects, once per query (a
  column altered to another type in the DuckDB CLI);
- ``SUSPECT_SQL`` flags, in the same query, a row with a NULL where the model needs a value or a
  value outside a ``Literal`` (role, status);
- the JSON columns (``origin``, ``metadata``) and every part's ``data`` are validated by pydantic
  (in its core, a page of parts per call): JSON can hold anything, and checking it field by
  field in Python costs more than pydantic's validation of it (measured);
- a row that fails any of these raises ``Untrusted``: the caller reads the rows again the way
  it did before (``rows.message_json``) and gets that path's result or its ValidationError.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, get_args

from pydantic import ConfigDict, TypeAdapter, ValidationError

from ..message import ErrorInfo, Message, Part, Tokens

_new = object.__new__
_set = object.__setattr__


class Untrusted(Exception):
    """A row this module will not build without validation; the caller validates it instead."""


def _literal_sql(column: str, field: str) -> str:
    """SQL true when ``column`` holds a value the ``Literal`` of ``field`` does not allow."""
    values = get_args(Message.model_fields[field].annotation)
    quoted = ", ".join("'" + str(v).replace("'", "''") + "'" for v in values)
    return f"{column} NOT IN ({quoted})"


# The message columns in ``Message`` field order, and the DuckDB type each must have.
_MESSAGE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("t.id", "VARCHAR"), ("t.session_id", "VARCHAR"), ("t.role", "VARCHAR"),
    ("t.parent_id", "VARCHAR"), ("t.agent", "VARCHAR"), ("t.model", "VARCHAR"),
    ("t.provider", "VARCHAR"), ("t.status", "VARCHAR"), ("t.finish", "VARCHAR"),
    ("t.summary", "BOOLEAN"), ("t.error_type", "VARCHAR"), ("t.error_message", "VARCHAR"),
    ("t.tokens_input", "BIGINT"), ("t.tokens_output", "BIGINT"), ("t.tokens_reasoning", "BIGINT"),
    ("t.tokens_cache_read", "BIGINT"), ("t.tokens_cache_write", "BIGINT"),
    ("t.tokens_estimated", "BOOLEAN"), ("t.cost", "DOUBLE"),
    # a float of seconds: the very double ``rows.seconds`` computes from the microseconds
    ("epoch_us(t.created_at) / 1e6", "DOUBLE"), ("epoch_us(t.completed_at) / 1e6", "DOUBLE"),
    ("t.origin", "JSON"), ("t.metadata", "JSON"), ("t.replay_of", "VARCHAR"),
)
# True for a row a validator would refuse or would have to coerce: a NULL in a field that
# takes none (the schema says NOT NULL, but a file can be altered), a value no Literal allows.
SUSPECT_SQL = " OR ".join((
    *(f"{c} IS NULL" for c in ("t.id", "t.session_id", "t.agent", "t.summary", "t.tokens_input",
                               "t.tokens_output", "t.tokens_reasoning", "t.tokens_cache_read",
                               "t.tokens_cache_write", "t.tokens_estimated", "t.created_at")),
    "(t.error_type IS NOT NULL AND t.error_message IS NULL)",
    _literal_sql("t.role", "role"), _literal_sql("t.status", "status"),
))
MESSAGE_SELECT = ", ".join(c for c, _ in _MESSAGE_COLUMNS) + f", coalesce({SUSPECT_SQL}, true)"
_EXPECTED_TYPES = (*(t for _, t in _MESSAGE_COLUMNS), "BOOLEAN")


def check_description(description: Sequence[Sequence[Any]] | None) -> None:
    """Untrusted unless the result of ``MESSAGE_SELECT`` has the column types expected."""
    if description is None or tuple(str(d[1]) for d in description) != _EXPECTED_TYPES:
        raise Untrusted("the message table's columns are not of the types this version wrote")


# Every field of each model, as validating a complete row sets them (each object gets a copy).
_MESSAGE_FIELDS = set(Message.model_fields)
_MESSAGE_ROW_FIELDS = _MESSAGE_FIELDS - {"parts"}
_TOKEN_FIELDS = set(Tokens.model_fields)
_ERROR_FIELDS = set(ErrorInfo.model_fields)

_JSON_OBJECT: TypeAdapter[dict[str, Any]] = TypeAdapter(dict[str, Any])
_JSON_OBJECT_OR_NULL: TypeAdapter[dict[str, Any] | None] = TypeAdapter(dict[str, Any] | None)
# Strings are not interned across a page (``cache_strings``): measured 13 % faster here, and
# nothing may rely on two equal strings being one object.
_PARTS: TypeAdapter[list[Part]] = TypeAdapter(list[Part], config=ConfigDict(cache_strings="keys"))
_PARTS_PER_CALL = 20_000  # more in one call is slower (a 60 MB document: cache misses)


def _built(cls: type, values: dict[str, Any], fields: set[str]) -> Any:
    """An instance of the pydantic model ``cls`` holding ``values``, as its validator makes
    one: ``__dict__``, a fields set of its own, no extras, no private attributes."""
    obj = _new(cls)
    _set(obj, "__dict__", values)
    _set(obj, "__pydantic_fields_set__", fields.copy())
    _set(obj, "__pydantic_extra__", None)
    _set(obj, "__pydantic_private__", None)
    return obj


def messages_from_rows(rows: Iterable[Sequence[Any]],
                       parts: dict[str, list[Part]] | None) -> dict[str, Message]:
    """``MESSAGE_SELECT`` rows as messages by id, with their ``parts`` (each message's list,
    by its id; none given: read without parts, as the validator leaves them: unset)."""
    fields = _MESSAGE_ROW_FIELDS if parts is None else _MESSAGE_FIELDS
    found = {} if parts is None else parts
    out: dict[str, Message] = {}
    # The loop is the cost of a long read: one ``_built`` inlined, locals bound.
    new, set_, message_cls, tokens_cls, token_fields = _new, _set, Message, Tokens, _TOKEN_FIELDS
    try:
        for (id_, session_id, role, parent_id, agent, model, provider, status, finish,
             summary, error_type, error_message, t_in, t_out, t_reasoning, t_read, t_write,
             t_estimated, cost, created_at, completed_at, origin, metadata,
             replay_of, suspect) in rows:
            if suspect:
                raise Untrusted(f"message {id_!r}: a column holds what the model refuses")
            tokens = new(tokens_cls)
            set_(tokens, "__dict__", {
                "input": t_in, "output": t_out, "reasoning": t_reasoning,
                "cache_read": t_read, "cache_write": t_write, "estimated": t_estimated})
            set_(tokens, "__pydantic_fields_set__", token_fields.copy())
            set_(tokens, "__pydantic_extra__", None)
            set_(tokens, "__pydantic_private__", None)
            message = new(message_cls)
            set_(message, "__dict__", {
                "id": id_, "session_id": session_id, "role": role, "parent_id": parent_id,
                "agent": agent, "model": model, "provider": provider, "status": status,
                "finish": finish, "summary": summary,
                "error": None if error_type is None else _built(
                    ErrorInfo, {"type": error_type, "message": error_message}, _ERROR_FIELDS),
                "tokens": tokens, "cost": cost, "created_at": created_at,
                "completed_at": completed_at,
                "origin": None if origin is None else _JSON_OBJECT_OR_NULL.validate_json(origin),
                "metadata": {} if metadata is None or metadata == "{}"
                else _JSON_OBJECT.validate_json(metadata),
                "replay_of": replay_of,
                "parts": found.get(id_) or [],
            })
            set_(message, "__pydantic_fields_set__", fields.copy())
            set_(message, "__pydantic_extra__", None)
            set_(message, "__pydantic_private__", None)
            out[id_] = message
    except ValidationError as error:  # a JSON column that is not an object
        raise Untrusted(str(error)) from error
    return out


def parts_by_message(rows: Sequence[tuple[str, str]]) -> dict[str, list[Part]]:
    """``(message_id, data)`` rows in order as each message's parts, validated by pydantic a
    page at a time; a part is its row's (the column's ``message_id``, not the JSON's)."""
    out: dict[str, list[Part]] = {}
    try:
        for start in range(0, len(rows), _PARTS_PER_CALL):
            page = rows[start:start + _PARTS_PER_CALL]
            parts = _PARTS.validate_json("[" + ",".join([r[1] for r in page]) + "]")
            for (message_id, _), part in zip(page, parts, strict=True):
                found = out.get(message_id)
                if found is None:
                    out[message_id] = [part]
                else:
                    found.append(part)
    except ValidationError as error:
        raise Untrusted(str(error)) from error
    return out


def with_parts(message: Message, parts: list[Part]) -> Message:
    """``message.model_copy(update={"parts": parts})``, without pydantic's Python-level copy
    machinery: a shallow copy whose fields set gains ``parts`` (what model_copy does)."""
    values = message.__dict__.copy()
    values["parts"] = parts
    obj = _new(Message)
    _set(obj, "__dict__", values)
    _set(obj, "__pydantic_fields_set__", message.__pydantic_fields_set__ | {"parts"})
    _set(obj, "__pydantic_extra__", None)
    _set(obj, "__pydantic_private__", None)
    return obj
