"""A function's signature, type hints and docstring → a JSON Schema for the model."""

from __future__ import annotations

import inspect
import re
import types
import typing
from typing import Any, Literal, get_args, get_origin

_SIMPLE = {str: "string", int: "integer", float: "number", bool: "boolean"}


def type_schema(tp: Any) -> dict[str, Any]:
    """JSON Schema for a Python type hint (the common ones; anything else is unconstrained)."""
    if tp is inspect.Parameter.empty or tp is Any:
        return {}
    if tp in _SIMPLE:
        return {"type": _SIMPLE[tp]}
    if tp is type(None):
        return {"type": "null"}
    origin, args = get_origin(tp), get_args(tp)
    if origin is Literal:
        return {"enum": list(args)}
    if origin in (typing.Union, types.UnionType):
        options = [type_schema(a) for a in args]
        non_null = [o for o in options if o != {"type": "null"}]
        if len(non_null) == 1 and len(options) == 2:
            return {"anyOf": [non_null[0], {"type": "null"}]}
        return {"anyOf": options}
    if origin in (list, tuple, set, frozenset) or tp in (list, tuple, set):
        schema: dict[str, Any] = {"type": "array"}
        if args:
            schema["items"] = type_schema(args[0])
        return schema
    if origin is dict or tp is dict:
        return {"type": "object"}
    if isinstance(tp, type) and hasattr(tp, "model_json_schema"):  # a pydantic model
        return tp.model_json_schema()
    return {}


def _param_docs(doc: str) -> dict[str, str]:
    """Parameter descriptions from a Google- or NumPy-style docstring."""
    found: dict[str, str] = {}
    for m in re.finditer(r"^\s*(\w+)\s*(?:\([^)]*\))?\s*:\s*(.+)$", doc, re.MULTILINE):
        found.setdefault(m.group(1), m.group(2).strip())
    return found


def function_schema(fn: Any) -> tuple[dict[str, Any], str]:
    """(parameters schema, description) for ``fn``."""
    sig = inspect.signature(fn)
    try:
        hints = typing.get_type_hints(fn)
    except Exception:
        hints = {}
    doc = inspect.getdoc(fn) or ""
    summary = doc.split("\n\n", 1)[0].strip()
    param_docs = _param_docs(doc)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, param in sig.parameters.items():
        if name in ("self", "ctx") or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        prop = type_schema(hints.get(name, param.annotation))
        if name in param_docs:
            prop["description"] = param_docs[name]
        if param.default is inspect.Parameter.empty:
            required.append(name)
        elif param.default is None or isinstance(param.default, str | int | float | bool):
            prop["default"] = param.default
        properties[name] = prop
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    return schema, summary
