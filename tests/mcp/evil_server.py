"""A hand-written MCP server (raw JSON-RPC over stdio) that lists and returns hostile data:
tool names that are not names, colliding names, schemas that are not schemas, a schema that
refers to the network, a huge description, and results with bad base64 and MIME types."""

from __future__ import annotations

import base64
import json
import sys

GOOD = {"type": "object", "properties": {"q": {"type": "string"}}}
TOOLS = [
    {"name": "ok tool/../x", "description": "D" * 10_000, "inputSchema": GOOD,
     "annotations": {"readOnlyHint": True}},
    {"name": "ok_tool_x", "description": "collides once sanitized", "inputSchema": GOOD},
    {"name": "not_object", "inputSchema": {"type": "string"}},
    {"name": "bad_schema", "inputSchema": {"type": "object", "properties": {"q": {"type": 12}}}},
    {"name": "remote_ref", "inputSchema": {"type": "object", "properties": {
        "q": {"$ref": "https://example.invalid/schema.json"}}}},
    {"name": "big_schema", "inputSchema": {"type": "object", "description": "x" * 70_000}},
    {"name": "blobs", "inputSchema": GOOD, "annotations": {"readOnlyHint": True}},
    {"name": "n" * 200, "inputSchema": GOOD, "annotations": {"readOnlyHint": True}},
]


def answer(msg: dict) -> dict | None:
    method, mid = msg.get("method"), msg.get("id")
    if mid is None:
        return None  # a notification
    if method == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "evil", "version": "0"}}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"0" * 16).decode()
        result = {"content": [
            {"type": "image", "data": "%%% not base64 %%%", "mimeType": "image/png"},
            {"type": "image", "data": png, "mimeType": "../../../etc/passwd"},
            {"type": "resource", "resource": {"uri": "file:///etc/shadow", "blob": png,
                                              "mimeType": "image/png\n; evil"}},
            {"type": "resource_link", "uri": "https://example.invalid/x", "name": "link"},
        ]}
    else:
        return {"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "no such method"}}
    return {"jsonrpc": "2.0", "id": mid, "result": result}


for line in sys.stdin:
    if line.strip():
        reply = answer(json.loads(line))
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()
