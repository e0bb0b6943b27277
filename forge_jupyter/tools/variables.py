"""``variables``: what the notebook's namespace holds, or a close look at one variable."""

from __future__ import annotations

import reprlib
import sys
import types
from typing import Any

from ..errors import ToolError
from .base import Tool, ToolContext, ToolResult
from .truncate import MAX_ENTRIES

# IPython's own names in a kernel's user namespace: not the person's variables.
HIDDEN = {"In", "Out", "exit", "quit", "get_ipython", "open"}
_repr = reprlib.Repr()
_repr.maxstring, _repr.maxother, _repr.maxlist, _repr.maxdict = 400, 400, 20, 20


def _visible(name: str, value: Any) -> bool:
    if name.startswith("_") or name in HIDDEN:
        return False
    return not isinstance(value, types.ModuleType | types.FunctionType | type | types.BuiltinFunctionType)


def visible_names(namespace: dict[str, Any]) -> list[str]:
    """The person's variables, sorted: what the listing shows and an unknown name's error names."""
    return sorted(n for n, v in namespace.items() if _visible(n, v))


def _shape(value: Any) -> str:
    shape = getattr(value, "shape", None)
    if isinstance(shape, tuple):
        return "×".join(str(n) for n in shape)
    try:
        return f"len {len(value)}"
    except TypeError:
        return ""


def _memory(value: Any) -> int:
    usage = getattr(value, "memory_usage", None)
    if callable(usage):  # pandas: the real size, strings included
        try:
            total = usage(deep=True)
            return int(total.sum()) if hasattr(total, "sum") else int(total)
        except Exception:
            pass
    nbytes = getattr(value, "nbytes", None)
    if isinstance(nbytes, int):
        return nbytes
    return sys.getsizeof(value)


def _human(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TB"


def list_variables(namespace: dict[str, Any]) -> str:
    rows = [(name, type(v).__name__, _shape(v), _human(_memory(v)))
            for name, v in sorted(namespace.items()) if _visible(name, v)]
    if not rows:
        return "The namespace holds no variables yet."
    shown = rows[:MAX_ENTRIES]
    widths = [max(len(r[i]) for r in [("name", "type", "shape", "memory"), *shown]) for i in range(4)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(("name", "type", "shape", "memory"), widths, strict=True))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in shown]
    if len(rows) > len(shown):
        lines.append(f"… and {len(rows) - len(shown)} more")
    return "\n".join(lines)


def inspect_variable(name: str, value: Any) -> str:
    kind = type(value).__name__
    module = type(value).__module__
    if module.startswith("pandas") and hasattr(value, "dtypes") and hasattr(value, "head"):
        import pandas as pd

        with pd.option_context("display.max_columns", 50, "display.width", 200):
            parts = [f"{name}: DataFrame {value.shape[0]:,} rows × {value.shape[1]} columns, "
                     f"{_human(_memory(value))}",
                     "dtypes:\n" + value.dtypes.to_string(),
                     "head(5):\n" + value.head(5).to_string()]
            try:
                parts.append("describe():\n" + value.describe(include="all").to_string())
            except Exception:
                pass
        return "\n\n".join(parts)
    if module.startswith("pandas") and hasattr(value, "dtype") and hasattr(value, "head"):
        return (f"{name}: Series of {len(value):,} ({value.dtype})\n\n" + value.head(10).to_string()
                + "\n\n" + value.describe().to_string())
    shape = _shape(value)
    return f"{name}: {kind}{f' ({shape})' if shape else ''}, {_human(_memory(value))}\n{_repr.repr(value)}"


async def run_variables(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    namespace = ctx.namespace
    name = args.get("name")
    if not name:
        return ToolResult(list_variables(namespace), title="variables")
    if name not in namespace:
        close = visible_names(namespace)
        raise ToolError(f"There is no variable named {name!r}. Variables: {', '.join(close[:50]) or 'none'}.")
    return ToolResult(inspect_variable(name, namespace[name]), title=name)


def variables_tool() -> Tool:
    return Tool(
        name="variables",
        description=(
            "List the notebook's variables (name, type, shape or length, memory), or, with "
            "`name`, inspect one: a DataFrame's shape, dtypes, head and describe(); other values "
            "a bounded repr. Read-only."
        ),
        parameters={
            "type": "object",
            "properties": {"name": {"type": "string", "description": "a variable to inspect"}},
            "additionalProperties": False,
        },
        execute=run_variables,
        subject_arg="name",
    )
