"""What issue 24's bounds cost on the hot paths, as ratios against a tree from before them.

    python benchmarks/bench_bounds.py [--against bd1cfa7] [--rounds 5] [--small]

Three paths the new bounds touch, each measured for two source trees side by side in one run:
``--against REV`` (default ``bd1cfa7``, main before the security work), checked out with
``git worktree add`` into a temporary folder, and the tree this script is in:

- **delta path**: one streamed answer of 2,000 chunks from the fake model server through real
  litellm, the Processor and a DuckDB store (``Session.prompt``);
- **file tool call**: ``read`` of a small file through the tool registry (``Tool.run``: argument
  validation, the root's path checks, the read itself);
- **grep**: the ``grep`` tool over a folder of 10,000 small files.

Each measurement runs in a process of its own with ``PYTHONPATH`` set to its tree (the child
checks that it imported that tree), trees interleaved A B A B so drift on a shared machine
touches both alike; medians and ratios (current / against) are printed. Not part of the tests'
pass/fail; ``--small`` (fewer chunks, files and rounds, one process per tree) is what
tests/test_benchmarks.py runs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _small import HELP

ROOT = Path(__file__).resolve().parents[1]
AGAINST = "bd1cfa7"
PATHS = ("delta path", "file tool call", "grep")


# ------------------------------------------------------------------ one measurement (a child)

def _delta_path(work: Path, chunks: int, repeat: int) -> list[float]:
    from forge_jupyter import Forge
    from forge_jupyter.testing import FakeModelServer, Turn, text

    body = "".join(f"w{i % 10} " for i in range(chunks))  # ``chunks`` chunks of 3 characters
    times = []
    with FakeModelServer() as server:
        forge = Forge(db=str(work / f"delta-{os.getpid()}.duckdb"), builtin_tools=False,
                      load_plugins=False, **server.model_kwargs("openai"))
        server.add(Turn.text("warm"))
        forge.session(new=True).prompt("first use of litellm and the file, not timed")
        for _ in range(repeat):
            server.add(Turn([text(body, chunk=3)]))
            session = forge.session(new=True)
            start = time.perf_counter()
            answer = session.prompt("go")
            times.append(time.perf_counter() - start)
            assert len(answer.text) >= 3 * chunks - 1, answer.text[:200]
        forge.close()
    return times


def _tool_calls(work: Path, tool: str, args: dict, expect: str, calls: int) -> list[float]:
    import asyncio

    from forge_jupyter import Forge
    from forge_jupyter.tools.base import ToolContext

    try:  # the services as typed fields (session/host.py); an older tree took the Forge itself
        from forge_jupyter.session.host import tool_fields
    except ImportError:
        def tool_fields(forge):
            return {"forge": forge}

    forge = Forge(db=":memory:", load_plugins=False, root=str(work))
    registered = forge.registry.get(tool)
    assert registered is not None, f"no {tool} tool in this tree"
    ctx = ToolContext(session_id="ses_bench", message_id="msg_bench", call_id="call_bench",
                      part_id="prt_bench", root=str(work), **tool_fields(forge))

    async def run() -> list[float]:
        result = await registered.run(args, ctx)  # warm: imports, compiled validators
        assert expect in result.output, result.output[:500]
        times = []
        for _ in range(calls):
            start = time.perf_counter()
            await registered.run(args, ctx)
            times.append(time.perf_counter() - start)
        return times

    try:
        return asyncio.run(run())
    finally:
        forge.close()


def child(paths: list[str], work: Path, tree: Path, small: bool) -> None:
    import forge_jupyter

    imported = Path(forge_jupyter.__file__).resolve()
    assert imported.is_relative_to(tree.resolve()), f"imported {imported}, not the tree {tree}"
    for path in paths:
        if path == "delta path":
            times = _delta_path(work, 200 if small else 2_000, 1 if small else 3)
        elif path == "file tool call":
            times = _tool_calls(work / "files", "read", {"path": "small.txt"}, "line 39",
                                20 if small else 300)
        else:
            times = _tool_calls(work / "tree", "grep", {"pattern": "needle_[0-9]+"}, "needle_0",
                                1 if small else 5)
        print(json.dumps({"path": path, "seconds": statistics.median(times)}))


# ---------------------------------------------------------------------- the run (the parent)

def _data(work: Path, files: int) -> None:
    (work / "files").mkdir()
    (work / "files" / "small.txt").write_text("".join(f"line {i}: some text\n" for i in range(40)))
    tree = work / "tree"
    for i in range(files):
        folder = tree / f"d{i // 100:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        needle = f"needle_{i}\n" if i % 50 == 0 else ""
        (folder / f"f{i:05d}.py").write_text(f"# file {i}\nx = {i}\n{needle}def f():\n    return x\n")


def measure(paths: tuple[str, ...], tree: Path, work: Path, small: bool) -> dict[str, float]:
    """Seconds per path, measured in a fresh process that imports ``tree``."""
    env = {**os.environ, "PYTHONPATH": str(tree), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    run = subprocess.run([sys.executable, __file__, "--child", *paths, "--work", str(work),
                          "--tree", str(tree), *(["--small"] if small else [])],
                         cwd=work, env=env, capture_output=True, text=True, timeout=900)
    if run.returncode != 0:
        raise SystemExit(f"{', '.join(paths)} in {tree} failed:\n{run.stderr[-3000:]}")
    rows = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    return {r["path"]: r["seconds"] for r in rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", default=AGAINST, help="the git revision to compare with")
    parser.add_argument("--rounds", type=int, default=5, help="A B rounds per path")
    parser.add_argument("--files", type=int, default=10_000, help="files grep walks")
    parser.add_argument("--small", action="store_true", help=HELP)
    parser.add_argument("--child", choices=PATHS, nargs="+", help=argparse.SUPPRESS)
    parser.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--tree", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.child, args.work, args.tree, args.small)
    if args.small:
        args.rounds, args.files = 1, 300
    with tempfile.TemporaryDirectory(prefix="bench-bounds-") as tmp:
        work = Path(tmp)
        against = work / "against"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet",
                        str(against), args.against], check=True)
        try:
            _data(work, args.files)
            trees = {"against": against, "current": ROOT}
            figures: dict[str, dict[str, list[float]]] = {p: {t: [] for t in trees} for p in PATHS}
            # One process per measurement; --small shares one process per tree (its figures
            # mean nothing, and each process pays for importing litellm).
            groups = [PATHS] if args.small else [(p,) for p in PATHS]
            for _ in range(args.rounds):
                for paths in groups:
                    for label, tree in trees.items():  # A B, A B, …
                        for path, seconds in measure(paths, tree, work, args.small).items():
                            figures[path][label].append(seconds)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(against)],
                           check=False)
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True).stdout.strip() or "?"
    print(f"# bench_bounds — against {args.against} vs current ({head}, working tree); "
          f"{args.rounds} rounds, medians; load {os.getloadavg()[0]:.1f}")
    sizes = {"delta path": f"{200 if args.small else 2_000} chunks, DuckDB",
             "file tool call": "read, 40 lines", "grep": f"{args.files:,} files"}
    print(f"{'path':<34}{'against':>12}{'current':>12}{'current/against':>17}")
    for path in PATHS:
        a, b = (statistics.median(figures[path][t]) for t in ("against", "current"))
        print(f"{path + ' (' + sizes[path] + ')':<34}{a * 1e3:>9.2f} ms{b * 1e3:>9.2f} ms"
              f"{b / a:>16.2f}×")


if __name__ == "__main__":
    main()
