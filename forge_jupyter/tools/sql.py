"""``sql``: read-only DuckDB SQL over the notebook's DataFrames and the session's files.

The model's SQL is untrusted. What it may do is decided from what DuckDB parses, never from
its first word (store/sqlcheck.py: exactly one SELECT, nothing in it that writes or runs SQL
text — ``EXPLAIN ANALYZE COPY …`` and ``WITH x AS (COPY …)`` are refused), and it runs where
nothing can be written whatever the text says (store/sandbox.py, ``locked_connection``): a
DuckDB instance of its own, holding the namespace's DataFrames (pandas, polars, Arrow) under
their variable names, that may read exactly the files the query names and nothing else. On
Linux it runs in a thread that Landlock forbids to write any file (tools/confined.py), so even
the files it reads cannot be overwritten. The instance is sized for a kernel — 1 GiB of memory
(a quarter of RAM where that is less), two threads, nothing spilled to disk — and the call's
timeout or Stop interrupts the query where it runs, so no work outlives the call.

File paths are the string literals the query gives a reader (``read_csv('data/x.csv')``,
``read_parquet(['a.parquet', 'b.parquet'])``, ``FROM 'x.csv'``): each is resolved against the
session's directory — not the process's working directory — like the file tools' paths
(``..``, absolute paths elsewhere and symbolic links out of it are refused) and approved by
their one check (tools/reach.py: a regular file, not the store's, not another session's
outputs); a wildcard is expanded here, by the file tools' walk of the root, to the files that
check lets through — never by DuckDB, never outside the root — and the literal is replaced by
the absolute paths before DuckDB sees the query. Those paths are DuckDB's ``allowed_paths``:
it can open nothing else, whatever the query builds.
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ToolError
from ..store.query.check import Checked, ReadOnlySQL, check_select, nodes
from .base import Tool, ToolContext, ToolResult, title_line
from .confined import confined
from .paths import locate
from .reach import Fence, approve, check, fence_of, walk
from .threads import Stop

MAX_ROWS = 100
ADVICE = "The sql tool never writes data or files; use the write or python tools for that."
WILDCARDS = ("*", "?", "[")
MEMORY_LIMIT = 1 << 30  # bytes at most (less on a small machine: _memory_limit)
THREADS = 2  # DuckDB's worker threads per query: a kernel shares the machine


def _frames(namespace: dict[str, Any]) -> dict[str, Any]:
    found = {}
    for name, value in namespace.items():
        if name.startswith("_") or not name.isidentifier():
            continue
        module = type(value).__module__
        if (module.startswith("pandas") and type(value).__name__ == "DataFrame") or \
           (module.startswith("polars") and type(value).__name__ == "DataFrame") or \
           (module.startswith("pyarrow") and type(value).__name__ == "Table"):
            found[name] = value
    return found


def check_read_only(query: str) -> Checked:
    """One read-only SELECT, or a ToolError naming what was found instead."""
    try:
        return check_select(query, who="The sql tool", advice=ADVICE)
    except ReadOnlySQL as exc:
        raise ToolError(str(exc)) from None


# ------------------------------------------------------------------------------ file paths


@dataclass(frozen=True, slots=True)
class _Literal:
    start: int  # byte offset of the quoted literal in the statement (UTF-8)
    value: str
    kind: str  # "argument", "list item" (inside [...]) or "table" (FROM 'x.csv')


def _is_reader(name: str) -> bool:
    name = name.lower()
    return name.startswith(("read_", "parquet_")) or name in ("sniff_csv", "glob")


def _literals(checked: Checked, frames: set[str]) -> list[_Literal]:
    """The string literals of ``checked`` that DuckDB would open as files: the first argument
    of a reader (or each string of a list there), and a table name that is a path."""
    ctes = {entry["key"] for n in nodes(checked.tree) if isinstance(n.get("cte_map"), dict)
            for entry in n["cte_map"].get("map", [])}
    found = []
    for node in nodes(checked.tree):
        if node.get("type") == "TABLE_FUNCTION":
            function = node.get("function") or {}
            arguments = function.get("arguments") or []
            if not _is_reader(str(function.get("function_name", ""))) or not arguments:
                continue
            first = arguments[0].get("expression") or {}
            if first.get("class") == "CONSTANT":
                found.append((first, "argument"))
            elif first.get("class") == "FUNCTION" and first.get("function_name") == "list_value":
                found.extend((a.get("expression") or {}, "list item")
                             for a in first.get("arguments") or [])
        elif (node.get("type") == "BASE_TABLE" and not node.get("catalog_name")
              and not node.get("schema_name")):
            name = str(node.get("table_name", ""))
            if name not in frames and name not in ctes and ("." in name or "/" in name):
                found.append(({"query_location": node.get("query_location"),
                               "literal": {"kind": "STRING", "text": name}}, "table"))
    return [_Literal(int(e["query_location"]), e["literal"]["text"], kind)
            for e, kind in found
            if e.get("class", "CONSTANT") == "CONSTANT"
            and (e.get("literal") or {}).get("kind") == "STRING"]


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


MAX_FILES = 10_000  # files one wildcard may name: DuckDB is given each one by name


def _files(value: str, root: str, fence: Fence) -> list[str]:
    """The real paths ``value`` names inside ``root`` that the model may read (a wildcard:
    every such file it matches). Only the model's own spelling and the root are ever named in
    an error: nothing outside the root is listed, resolved or looked up."""
    if "://" in value:
        raise ToolError(f"{value!r} is a URL: the sql tool reads files in the session's "
                        "directory only, and never reaches the network.")
    if not any(w in value for w in WILDCARDS):
        return [approve(fence, locate(root, value, must_exist=True))]
    names = value.split("/")
    fixed = next(i for i, n in enumerate(names) if any(w in n for w in WILDCARDS))
    pattern = [n for n in names[fixed:] if n not in ("", ".")]
    try:  # the folder the wildcard starts from: inside the root, or nothing is listed
        start = locate(root, "/".join(names[:fixed]) or ("/" if value.startswith("/") else "."))
    except ToolError as exc:
        raise ToolError(f"{value!r} starts outside the session's root: {exc}") from None
    nothing = ToolError(f"No file under the session's root matches {value!r} (files that are not "
                        "regular, the store's files and other sessions' outputs never match).")
    if not start.path.is_dir():
        raise nothing
    check(fence, start)
    found = []
    depth = None if "**" in pattern else len(pattern)
    for file in walk(start, fence, depth=depth):
        if _matches(pattern, file.rel.split("/")):
            found.append(str(file.target.path if file.target is not None else
                             Path(start.path, file.rel)))
            if len(found) > MAX_FILES:
                raise ToolError(f"{value!r} matches more than {MAX_FILES:,} files; narrow it (a "
                                "folder, or a longer name pattern).")
    if not found:
        raise nothing
    return sorted(set(found))


def _matches(pattern: list[str], names: list[str]) -> bool:
    """Whether the path ``names`` matches ``pattern`` name by name: ``*``, ``?`` and ``[…]``
    within one name, ``**`` for any number of folders; a name starting with ``.`` only where
    the pattern's does (as a shell's glob). Linear in both lengths: each pair is judged once."""
    memo: dict[tuple[int, int], bool] = {}

    def at(i: int, j: int) -> bool:
        if (i, j) in memo:
            return memo[i, j]
        if i == len(pattern):
            result = j == len(names)
        elif pattern[i] == "**":
            result = at(i + 1, j) or (j < len(names) and not names[j].startswith(".")
                                      and at(i, j + 1))
        else:
            result = (j < len(names) and (not names[j].startswith(".") or pattern[i].startswith("."))
                      and fnmatch.fnmatchcase(names[j], pattern[i]) and at(i + 1, j + 1))
        memo[i, j] = result
        return result

    return at(0, 0)


def confine_paths(checked: Checked, root: str | None, frames: set[str], fence: Fence
                  ) -> tuple[str, list[str]]:
    """(the statement with every file literal made an absolute path inside ``root``, those
    paths): what the query may read, and nothing else."""
    literals = _literals(checked, frames)
    if not literals:
        return checked.text, []
    if not root:
        raise ToolError("This session has no root directory, so the sql tool reads no files: "
                        "query the notebook's DataFrames, or start the session with a root.")
    data = checked.text.encode()
    allowed: list[str] = []
    for lit in sorted(literals, key=lambda x: x.start, reverse=True):
        quote = "'" if data[lit.start:lit.start + 1] == b"'" else '"'
        spelled = (quote + lit.value.replace(quote, quote * 2) + quote).encode()
        if data[lit.start:lit.start + len(spelled)] != spelled:
            raise ToolError(f"Could not find the path {lit.value!r} as written in the query; "
                            "write file paths as plain 'quoted' strings.")
        paths = _files(lit.value, root, fence)
        many = len(paths) > 1 or any(w in lit.value for w in WILDCARDS)
        if lit.kind == "table" and many:
            raise ToolError(f"FROM {lit.value!r} names several files; read them with "
                            f"read_csv({_quoted(lit.value)}) or read_parquet(…) instead.")
        spelled_now = ", ".join(_quoted(p) for p in paths)
        if many and lit.kind == "argument":
            spelled_now = f"[{spelled_now}]"
        data = data[:lit.start] + spelled_now.encode() + data[lit.start + len(spelled):]
        allowed.extend(paths)
    return data.decode(), sorted(set(allowed))


# ------------------------------------------------------------------------------ running


def _memory_limit() -> int:
    """Bytes the sql tool's DuckDB may hold: 1 GiB, or a quarter of the machine's memory where
    that is less — the kernel, its DataFrames and the notebook server need the rest."""
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not a POSIX system that says
        return MEMORY_LIMIT
    return min(MEMORY_LIMIT, physical // 4)


def _run(query: str, namespace: dict[str, Any], root: str | None, fence: Fence,
         stop: Stop) -> str:
    import duckdb

    from ..store.query.sandbox import locked_connection

    frames = _frames(namespace)
    # DuckDB may open exactly the files the shared check approved (allowed_paths), no other
    text, allowed = confine_paths(check_read_only(query), root, set(frames), fence)
    check_read_only(text)  # the rewritten statement is checked again, as it will run
    memory = _memory_limit()
    con = locked_connection(allowed, memory_limit=memory, threads=THREADS)
    # the call's timeout or Stop interrupts the query where it runs, then the thread ends
    forget = stop.on_stop(con.interrupt)
    try:
        for name, frame in frames.items():
            con.register(name, frame)
        rel = con.sql(text)
        if rel is None:
            return "(no result)"
        [(total,)] = rel.aggregate("count(*)").fetchall()
        if stop.is_set():  # stopped between the two queries: the interrupt found none
            raise duckdb.InterruptException("INTERRUPT Error: Interrupted!")
        frame = rel.limit(MAX_ROWS).df()
    except duckdb.PermissionException as exc:
        raise ToolError(f"{exc}. The sql tool reads only the files named as 'quoted' paths "
                        "in the query (relative to the session's directory), and writes "
                        "nothing.") from None
    except duckdb.OutOfMemoryException:
        raise ToolError(f"The query needed more memory than the sql tool's limit "
                        f"({memory / 2**30:.2g} GiB): filter or aggregate earlier, add a "
                        "LIMIT, or work on the data in pandas with the python tool.") from None
    except duckdb.InterruptException:
        raise ToolError("The query was stopped (its timeout or Stop) before it finished.") \
            from None
    except duckdb.Error as exc:
        raise ToolError(f"{type(exc).__name__}: {exc}") from None
    finally:
        forget()
        con.close()
    import pandas as pd

    with pd.option_context("display.max_columns", 50, "display.width", 200,
                           "display.max_colwidth", 80):
        table = frame.to_string(index=False) if len(frame.columns) else "(no columns)"
    note = f"{total:,} row{'s' if total != 1 else ''}"
    if total > MAX_ROWS:
        note += f"; showing the first {MAX_ROWS} (add LIMIT/OFFSET or aggregate to see others)"
    return f"{table}\n\n({note})"


async def run_sql(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    namespace = ctx.namespace
    query = args["query"]
    # in a thread of its own that the OS forbids to write files, where Linux allows it
    text, os_confined = await confined(_run, query, namespace, ctx.root, fence_of(ctx), ctx.stop,
                                       stop=ctx.stop)
    return ToolResult(text, title=title_line(query) or "sql",
                      metadata={"writes_forbidden_by_os": os_confined})


def sql_tool() -> Tool:
    return Tool(
        name="sql",
        description=(
            "Run one read-only DuckDB query. Every DataFrame in the notebook is a table under "
            "its variable name; files under the session's root are read with read_csv('path'), "
            "read_parquet('path') or read_json('path') (relative, quoted; wildcards work). "
            "Returns at most 100 rows and the total row count; statements that write are "
            "refused."
        ),
        parameters={
            "type": "object",
            "properties": {"query": {"type": "string", "description": "one SELECT statement"}},
            "required": ["query"],
            "additionalProperties": False,
        },
        execute=run_sql,
        subject_arg="query",
    )
