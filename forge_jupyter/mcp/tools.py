"""An MCP server's tools as registry tools: ``server__tool``, its JSON Schema, its hints.

What a server lists is untrusted: a tool name is reduced to ``[A-Za-z0-9_-]`` within the 64
characters providers accept, and a tool whose name then collides with a builtin, a custom tool
or another MCP tool is left out (said in a notice); an input schema must be a JSON Schema
object (``type: object``, valid against its metaschema, under ``MAX_SCHEMA`` bytes, without
references outside itself) or the tool is left out; a description is cut to ``MAX_DESCRIPTION``.

Mutating-ness comes from the tool's annotations: ``readOnlyHint: true`` is read-only; anything
else (destructive, additive, or no annotations at all) is mutating — the ``build`` agent asks
before each call and ``plan`` leaves it out, like a builtin that writes. Rules still decide:
``github__*=ask`` or ``github__search*=allow`` as for any tool.
"""

from __future__ import annotations

import functools
import json
import posixpath
import re
from typing import Any

from ..errors import ToolError
from ..message import FilePart
from ..scrub import Scrubber, valid_text
from ..tools.base import Tool, ToolContext, ToolResult
from ..tools.permission import subject_of
from ..tools.threads import run_in_tool_thread
from .connection import ServerError
from .content import convert

MAX_NAME = 64
MAX_DESCRIPTION = 2000
MAX_SCHEMA = 64 * 1024
MAX_DEPTH = 32


def tool_name(server: str, raw: str) -> str:
    base = re.sub(r"_{2,}", "_", re.sub(r"[^A-Za-z0-9_-]", "_", raw)).strip("_") or "tool"
    return f"{server}__{base}"[:MAX_NAME]


def schema_problem(schema: Any) -> str | None:
    """Why ``schema`` cannot be a tool's parameters (None: it can)."""
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return "its input schema is not a JSON Schema object (type: object)"
    try:
        size = len(json.dumps(schema))
    except (TypeError, ValueError):
        return "its input schema is not JSON"
    if size > MAX_SCHEMA:
        return f"its input schema is {size:,} bytes (the limit is {MAX_SCHEMA:,})"
    stack: list[tuple[Any, int]] = [(schema, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            return f"its input schema nests deeper than {MAX_DEPTH} levels"
        if isinstance(node, dict):
            for key in ("$ref", "$dynamicRef", "$recursiveRef"):
                ref = node.get(key)
                if isinstance(ref, str) and not ref.startswith("#"):
                    return f"its input schema refers outside itself ({key}: {ref[:80]!r})"
            stack += [(v, depth + 1) for v in node.values()]
        elif isinstance(node, list):
            stack += [(v, depth + 1) for v in node]
    import jsonschema

    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as exc:
        return f"its input schema is not valid JSON Schema ({exc.message[:200]})"
    return None


def mutating(tool: Any) -> bool:
    hints = getattr(tool, "annotations", None)
    return not (hints is not None and hints.read_only_hint is True)


def hint_label(tool: Any) -> str:
    hints = getattr(tool, "annotations", None)
    if hints is None or (hints.read_only_hint is None and hints.destructive_hint is None):
        return "unknown (asks)"
    if hints.read_only_hint:
        return "read-only"
    return "destructive" if hints.destructive_hint is not False else "writes"


def subject(args: dict[str, Any], root: str | None = None, output_dir: str | None = None) -> str:
    """What a rule's argument pattern matches for an MCP tool: the argument the builtins use
    (``path``, ``query``, …; else the JSON of all arguments), with every path-like string
    normalized first — ``./data/x``, ``data//x`` and ``data/sub/../x`` are ``data/x``, and
    ``data/../secret`` is ``secret`` — so ``files__write_file:data/*=allow`` cannot be walked
    out of. The server's own links and encodings stay its business: a rule on an MCP tool's
    arguments is a convenience, the tool-level rule (``files__*=ask``) the boundary."""
    return subject_of({k: _normal(v) for k, v in args.items()})


def _normal(value: Any) -> Any:
    if isinstance(value, str) and ("/" in value or "\\" in value) and "://" not in value:
        norm = posixpath.normpath(value.replace("\\", "/"))
        return "/" + norm.lstrip("/") if norm.startswith("/") else norm
    return value


def adapt(manager: Any, server: str, listed: Any, name: str, timeout: float | None) -> Tool:
    """The registry tool that calls ``listed`` (an mcp_types.Tool) on ``server``."""
    remote = listed.name
    description = valid_text(listed.description or listed.title or remote)[:MAX_DESCRIPTION]

    async def execute(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            result = await manager.supervisor.call(server, remote, args)
        except ServerError as exc:
            raise ToolError(str(exc)) from None
        folder = f"{ctx.output_dir}/mcp" if ctx.output_dir else None
        # The run's scrubber (it knows this turn's keys); a direct call: the environment's.
        scrub = ctx.run.writer.scrubber if ctx.run is not None else Scrubber.from_environment()
        converted = await run_in_tool_thread(
            functools.partial(convert, result, folder=folder, stem=ctx.part_id, scrub=scrub),
            name=name, stop=ctx.stop)
        _record_files(ctx, converted)
        if result.is_error:
            raise ToolError(converted.text or f"{name} failed (the server gave no reason).")
        meta: dict[str, Any] = {"mcp": {"server": server, "tool": remote}}
        if converted.files:
            meta["files"] = [{"path": f.path, "mime": f.mime, "bytes": f.size}
                             for f in converted.files]
        return ToolResult(output=converted.text, title=f"{server}: {remote}"[:120], metadata=meta)

    return Tool(name=name, description=f"[MCP server {server}] {description}",
                parameters=listed.input_schema, execute=execute, mutating=mutating(listed),
                timeout=timeout, subject=subject, lazy=True)


def _record_files(ctx: ToolContext, converted: Any) -> None:
    """Saved files become file parts of the message; images are shown to the person."""
    run = ctx.run
    if run is not None:
        for f in converted.files:
            run.writer.update_part(FilePart(session_id=ctx.session_id, message_id=ctx.message_id,
                                            path=f.path, mime=f.mime,
                                            filename=f.path.rsplit("/", 1)[-1]))
    if ctx.emit_display is not None and ctx.display_available:
        for mime, data in converted.images:
            ctx.emit_display({mime: data, "text/plain": f"<{mime} from MCP>"})

