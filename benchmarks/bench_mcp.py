"""Large MCP tool results over stdio: the SDK's ``stdio_client`` against forge's transport.

The same server (tests/mcp/mcp_servers.py, ``huge``: N MB of text in 100-character lines,
which the SDK's server sends twice — as text and as structured content) answers one call
through each client, side by side: the SDK's ``Client`` over its ``stdio_client``, and the
Supervisor of forge_jupyter.mcp (its own line reader, json.loads then validation). Printed:
seconds per call, the ratio, and each run's peak resident memory (a fresh process per run, so
one run's peak does not hide the other's). The SDK joins every chunk of a line onto what it
read before, so its time grows with the square of the message: it is run at sizes it finishes.
Not part of the test run.

    python benchmarks/bench_mcp.py [--sizes 1 5 10] [--ours 100]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from _small import HELP

ROOT = Path(__file__).resolve().parents[1]
SERVERS = str(ROOT / "tests" / "mcp" / "mcp_servers.py")

RUN = r"""
import asyncio, json, resource, sys, tempfile, time
mode, mb, servers = sys.argv[1], int(sys.argv[2]), sys.argv[3]

async def sdk():
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client
    p = StdioServerParameters(command=sys.executable, args=[servers, "stdio"])
    async with Client(stdio_client(p, errlog=tempfile.TemporaryFile("w+")), mode="legacy",
                      cache=None) as c:
        t = time.perf_counter()
        r = await c.call_tool("huge", {"megabytes": mb})
        return time.perf_counter() - t, len(r.content[0].text)

async def ours():
    from forge_jupyter.mcp.config import servers_of
    from forge_jupyter.mcp.supervisor import Supervisor
    sup = Supervisor(servers_of({"t": {"command": sys.executable, "args": [servers, "stdio"]}},
                                "bench", []))
    await sup.start_all()
    try:
        t = time.perf_counter()
        r = await sup.call("t", "huge", {"megabytes": mb})
        return time.perf_counter() - t, len(r.content[0].text)
    finally:
        sup.close()

seconds, size = asyncio.run(sdk() if mode == "sdk" else ours())
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": seconds, "chars": size, "peak_mb": peak}))
"""


def run(mode: str, mb: int) -> dict:
    out = subprocess.run([sys.executable, "-c", RUN, mode, str(mb), SERVERS], capture_output=True,
                         text=True, cwd=ROOT, timeout=3600, env=None, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[1, 5, 10])
    ap.add_argument("--ours", type=int, nargs="*", default=[100], help="sizes for forge alone")
    ap.add_argument("--small", action="store_true", help=HELP)
    args = ap.parse_args()
    if args.small:
        args.sizes, args.ours = [1], []
    print(f"{'MB':>5} {'SDK s':>8} {'forge s':>8} {'ratio':>7} {'SDK peak MB':>12} {'forge peak MB':>14}")
    for mb in args.sizes:
        sdk, ours = run("sdk", mb), run("ours", mb)
        print(f"{mb:>5} {sdk['seconds']:>8.2f} {ours['seconds']:>8.2f} "
              f"{sdk['seconds'] / ours['seconds']:>6.1f}x {sdk['peak_mb']:>12.0f} "
              f"{ours['peak_mb']:>14.0f}")
    for mb in args.ours:
        ours = run("ours", mb)
        print(f"{mb:>5} {'—':>8} {ours['seconds']:>8.2f} {'':>7} {'—':>12} {ours['peak_mb']:>14.0f}")


if __name__ == "__main__":
    main()
