"""Real MCP servers for the tests, written with the same SDK the client uses.

    python tests/mcp/mcp_servers.py stdio [NAME]      # serve over stdin/stdout
    python tests/mcp/mcp_servers.py stdio-stubborn    # …and stay alive after stdin closes
    python tests/mcp/mcp_servers.py http PORT         # streamable HTTP on 127.0.0.1:PORT

Tools: ``lookup`` (read-only), ``delete_row`` (destructive), ``write_note`` (additive, takes a
``path``), ``touch`` (no annotations),
``slow`` (sleeps), ``hang`` (never answers), ``chart`` (an image), ``report`` (an embedded
resource), ``fail`` (raises), ``crash`` (the process dies mid-call), ``huge`` (N MB of text),
``whoami`` (its pid and the environment variable it was asked for).
"""

from __future__ import annotations

import base64
import os
import struct
import sys
import time
import zlib

from mcp.server.mcpserver import MCPServer
from mcp_types import EmbeddedResource, ImageContent, TextResourceContents, ToolAnnotations


def tiny_png(width: int = 3, height: int = 2) -> bytes:
    """A valid PNG of ``width``×``height`` red pixels."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def build(name: str = "testsrv") -> MCPServer:
    server = MCPServer(name)
    rows = {"a": "alpha", "b": "beta"}

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def lookup(key: str) -> str:
        """Look a row up by key (read-only)."""
        return rows.get(key, f"no row {key}")

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
    def delete_row(key: str) -> str:
        """Delete a row (destructive)."""
        rows.pop(key, None)
        return f"deleted {key}"

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))
    def write_note(path: str, text: str) -> str:
        """Write a note at ``path`` (additive: it says so, without writing anything here)."""
        return f"wrote {path}"

    @server.tool()
    def touch(key: str) -> str:
        """Touch a row (no annotations: the client cannot know)."""
        return f"touched {key}"

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def slow(seconds: float) -> str:
        """Sleep, then answer."""
        time.sleep(seconds)
        return f"slept {seconds}"

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def hang() -> str:
        """Never answers."""
        while True:
            time.sleep(3600)

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def chart() -> list:
        """An image and a caption."""
        data = base64.b64encode(tiny_png()).decode()
        return ["the chart", ImageContent(type="image", data=data, mime_type="image/png")]

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def report() -> list:
        """An embedded text resource."""
        return [EmbeddedResource(type="resource", resource=TextResourceContents(
            uri="file:///../../etc/passwd", mime_type="text/csv", text="a,b\n1,2\n"))]

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def fail(why: str) -> str:
        """Raises."""
        raise ValueError(f"it broke: {why}")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def crash() -> str:
        """The process dies in the middle of the call."""
        os._exit(3)

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def huge(megabytes: int) -> str:
        """``megabytes`` MB of text, in lines of 100 characters."""
        line = "x" * 99 + "\n"
        return line * (megabytes * 1024 * 1024 // 100)

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def env_report(var: str) -> list:
        """An embedded text resource quoting an environment variable."""
        return [EmbeddedResource(type="resource", resource=TextResourceContents(
            uri="mem://env", mime_type="text/plain", text=f"{var}={os.environ.get(var, '')}\n"))]

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def whoami(var: str = "") -> str:
        """This process's pid, and the value of an environment variable."""
        return f"pid={os.getpid()} {var}={os.environ.get(var, '')}"

    return server


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode == "http":
        build().run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        build(sys.argv[2] if len(sys.argv) > 2 else "testsrv").run("stdio")
        if mode == "stdio-stubborn":  # a server that outlives its stdin: only a signal stops it
            time.sleep(3600)
