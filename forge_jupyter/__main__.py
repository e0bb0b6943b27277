"""``python -m forge_jupyter demo [--db PATH]``: a scripted session, stored and read back;
``python -m forge_jupyter copy SRC DST [--session ID]``: sessions copied between stores (copy.py);
``python -m forge_jupyter snapshot OUT [--db PATH] [--every SECONDS]``: a copy of the DuckDB store
to read without holding it (store/duckdb/snapshot.py).

With no provider key set it uses the offline demo model, so it runs on any machine.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

QUESTIONS = (
    "Which columns of `orders` have missing values, and how many?",
    "Which customer had the highest amount?",
)
CHART = "Plot amount by customer."


def demo(db: str | None) -> int:
    import importlib.util

    import pandas as pd

    from . import Forge
    from .bus import SessionStatus

    orders = pd.DataFrame({
        "customer": ["ada", "bob", "ada", "cy", "bob", "ada"],
        "amount": [12.5, 40.0, 7.25, None, 18.0, 30.0],
        "status": ["paid", "paid", "open", "open", None, "paid"],
    })
    path = db or str(Path(tempfile.mkdtemp(prefix="forge-demo-")) / "forge.duckdb")
    # The builtin tools work on this namespace, as they would on a notebook's variables.
    with Forge(db=path, namespace={"orders": orders}) as forge:
        def approve(request: Any) -> str:
            code = "\n".join(f"    {line}" for line in request.subject.splitlines())
            print(f"\n? {request.tool} asks for approval to run:\n{code}\n  → allowed once "
                  "(this script answers; in a notebook you click Allow)")
            return "once"

        forge.on_approval(approve)
        session = forge.session("demo", new=True)
        notices = []
        forge.bus.subscribe(lambda e: notices.append(e.detail.get("message")), types=SessionStatus)
        # A chart needs matplotlib (installed with the test extras); without it, a summary.
        chart = CHART if importlib.util.find_spec("matplotlib") else "Describe `orders`."
        for question in (*QUESTIONS, chart):
            answer = session.prompt(question)
            calls = ", ".join(f"{p.tool} ({p.state})" for m in session.messages()
                              if m.parent_id == answer.parent_id for p in m.parts if p.type == "tool")
            print(f"\n>>> {question}\n[tools: {calls}]\n{answer.text}\n[{answer.status}, "
                  f"{answer.tokens.input} in / {answer.tokens.output} out tokens, cost {answer.cost}]")
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
    c = sub.add_parser(
        "copy", help="copy sessions from one store to another (DuckDB file or postgresql:// DSN), "
        "verified row for row; never overwrites")
    c.add_argument("src", help="the source: an existing DuckDB file or a postgresql:// DSN")
    c.add_argument("dst", help="the destination: a DuckDB file (made if missing) or a DSN")
    c.add_argument("--session", action="append", metavar="ID",
                   help="copy this session (id or name); repeat for more (default: every live one)")
    c.add_argument("--tenant", default=os.environ.get("FORGE_TENANT", "default"),
                   help="the tenant to read (and write, unless --dst-tenant): default $FORGE_TENANT "
                   "or 'default'")
    c.add_argument("--dst-tenant", help="the tenant to write in the destination")
    s = sub.add_parser(
        "snapshot", help="copy the DuckDB store to a file of its own, to open in any DuckDB "
        "client without holding forge's file (docs/storage.md)")
    s.add_argument("out", help="the snapshot's path (replaced whole each time)")
    s.add_argument("--db", help="the store (default: $FORGE_DB or ~/.forge/forge.duckdb)")
    s.add_argument("--every", type=float, metavar="SECONDS",
                   help="keep it fresh: copy again every SECONDS when the store changed")
    args = parser.parse_args(argv)
    if args.command == "demo":
        return demo(args.db)
    if args.command == "copy":
        return copy(args)
    if args.command == "snapshot":
        return snapshot(args)
    return 2


def snapshot(args: argparse.Namespace) -> int:
    from .errors import ForgeError
    from .store.duckdb.snapshot import SnapshotRefused, keep_fresh, take_snapshot
    from .store.location import default_db_path, locate

    try:
        found = locate(args.db) if args.db else None
        if found is not None and found.path is None:
            raise SnapshotRefused(f"{args.db} is not a DuckDB file: a snapshot copies a file "
                                  "(a PostgreSQL database has its own read-only roles)")
        db = found.path if found is not None and found.path is not None else default_db_path()
        if args.every is not None:
            if args.every <= 0:
                raise SnapshotRefused("--every takes a number of seconds above 0")
            keep_fresh(db, Path(args.out), args.every)
            return 0
        print(take_snapshot(db, Path(args.out)))
    except (ForgeError, SnapshotRefused, OSError) as err:
        print(f"forge-jupyter snapshot: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    return 0


def copy_between(src: str, dst: str, sessions: list[str] | None, *, tenant: str,
                 dst_tenant: str | None) -> Any:  # copy.CopyReport
    """Open both stores by path or URL, copy (copy.py), close them."""
    from .copy import CopyFailed, copy_sessions, destination
    from .forge import open_store

    for where in (src, dst):
        if where.strip() == ":memory:":
            raise CopyFailed(":memory: holds nothing once the copy ends: give a DuckDB file or a "
                             "postgresql:// URL.")
    if "://" not in src and not os.path.exists(os.path.expanduser(src)):
        raise CopyFailed(f"no database at {src}: the source must be an existing DuckDB file "
                         "or a postgresql:// URL.")
    source = open_store(src, tenant=tenant)
    try:
        with destination(dst, lambda: open_store(dst, tenant=dst_tenant or tenant)) as target:
            return copy_sessions(source, target, sessions or None)
    finally:
        source.close()


def copy(args: argparse.Namespace) -> int:
    from .errors import ForgeError

    try:
        report = copy_between(args.src, args.dst, args.session, tenant=args.tenant,
                              dst_tenant=args.dst_tenant)
    except ForgeError as err:
        print(f"forge-jupyter copy: {err}", file=sys.stderr)
        return 1
    for sid in report.sessions:
        print(sid)
    print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
