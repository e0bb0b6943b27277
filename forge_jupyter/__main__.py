"""``python -m forge_jupyter demo [--db PATH]``: a scripted session, stored and read back.

With no provider key set it uses the offline demo model, so it runs on any machine.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path


def demo(db: str | None) -> int:
    from . import Forge
    from .bus import SessionStatus

    path = db or str(Path(tempfile.mkdtemp(prefix="forge-demo-")) / "forge.duckdb")
    with Forge(db=path) as forge:
        @forge.tool
        def python(code: str) -> str:
            """Run a short Python snippet and return what it prints (a stand-in for the
            notebook's own `python` tool, which runs in the kernel)."""
            import contextlib
            import io

            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(code, {})
            return out.getvalue()

        session = forge.session("demo", new=True)
        notices = []
        forge.bus.subscribe(lambda e: notices.append(e.detail.get("message")), types=SessionStatus)
        for question in ("What Python version is this kernel running?", "Thanks! Anything else?"):
            answer = session.prompt(question)
            print(f"\n>>> {question}\n{answer.text}\n[{answer.status}, {answer.tokens.input} in / "
                  f"{answer.tokens.output} out tokens, cost {answer.cost}]")
        for n in {n for n in notices if n}:
            print(f"\nnote: {n}")
        print(f"\nStored in {path}:")
        for m in session.messages():
            kinds = ", ".join(p.type if p.type != "tool" else f"tool:{p.tool}:{p.state}" for p in m.parts)
            print(f"  {m.id}  {m.role:<9} {m.status:<9} {kinds}")
        events = forge.store.events(session.id).items
        print(f"  {len(events)} events: {', '.join(sorted({e.type for e in events}))}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m forge_jupyter")
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("demo", help="run a scripted session and print what the store holds")
    d.add_argument("--db", help="DuckDB file to write (default: a new temporary file)")
    args = parser.parse_args(argv)
    if args.command == "demo":
        return demo(args.db)
    return 2


if __name__ == "__main__":
    sys.exit(main())
