"""Tool-path benchmarks (issue 4). Prints figures.

    .venv/bin/python benchmarks/bench_tools.py

Per-call overhead of what wraps a tool call — the permission gate (layered rules), argument
validation against the JSON Schema, and output truncation — on a no-op tool, in µs; and the same
with the tool run itself (`Tool.run`). Memory and time to truncate a 100 MB output:
benchmarks/bench_truncate.py.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from _small import small  # noqa: E402 — benchmarks/ is the script's folder

from forge_jupyter.tools.base import ToolContext, tool_from_function
from forge_jupyter.tools.permission import Permissions, Rule, agent_defaults, subject_of
from forge_jupyter.tools.truncate import truncate
from forge_jupyter.tools.write import write_tool


def noop(name: str, count: int = 1) -> str:
    """Do nothing."""
    return "ok"


def main(n: int = 50_000) -> None:
    tool = tool_from_function(noop)
    permissions = Permissions([
        ("agent", [*agent_defaults("build", ["write", "edit", "python"]), Rule("noop", "*", "allow")]),
        ("session", [Rule("write", "secret*", "deny")]),
        ("prompt", [Rule("sql", "*", "deny")]),
    ])
    args = {"name": "x", "count": 3}
    tool.validation_errors(args)  # compile the validator once, as the first call does

    def wrap() -> None:
        verdict = permissions.evaluate(tool.name, subject_of(args, tool.subject_arg))
        assert verdict.action == "allow"
        assert not tool.validation_errors(args)
        truncate("ok", output_dir=None, name="p")

    t = time.perf_counter()
    for _ in range(n):
        wrap()
    per_call = (time.perf_counter() - t) / n * 1e6

    parts = {}
    for label, fn in (("permission gate", lambda: permissions.evaluate(tool.name, subject_of(args))),
                      ("validation", lambda: tool.validation_errors(args)),
                      ("truncation", lambda: truncate("ok", output_dir=None, name="p"))):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        parts[label] = (time.perf_counter() - t) / n * 1e6

    ctx = ToolContext(session_id="s", message_id="m", call_id="c", part_id="p")

    async def runs() -> float:
        t = time.perf_counter()
        for _ in range(2_000):
            await tool.run(args, ctx)
        return (time.perf_counter() - t) / 2_000 * 1e6

    run_us = asyncio.run(runs())
    detail = ", ".join(f"{k} {v:.1f} µs" for k, v in parts.items())
    print(f"gate + validation + truncation on a no-op tool: {per_call:.1f} µs per call ({detail})")
    print(f"the no-op tool's own run (a sync function in a worker thread): {run_us:.1f} µs per call")
    file_gate(permissions, n // 5)


def file_gate(permissions: Permissions, n: int) -> None:
    """The gate of a file tool: its path matched raw (before issue 10) and normalized under the
    root (now: resolved against the file system, links included)."""
    write = write_tool()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "data" / "sub").mkdir(parents=True)
        args = {"path": "./data/sub/../x.csv", "content": "a,b\n"}
        timed = {}
        for label, fn in (("raw string", lambda: permissions.evaluate("write", subject_of(args))),
                          ("normalized path", lambda: permissions.evaluate(
                              "write", write.permission_subject(args, tmp)))):
            t = time.perf_counter()
            for _ in range(n):
                fn()
            timed[label] = (time.perf_counter() - t) / n * 1e6
    raw, normalized = timed["raw string"], timed["normalized path"]
    print(f"file tool gate (write ./data/sub/../x.csv): raw string {raw:.1f} µs, normalized path "
          f"{normalized:.1f} µs per call ({normalized / raw:.1f}×)")


if __name__ == "__main__":
    main(2_000 if small() else 50_000)
