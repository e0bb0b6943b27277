"""``%forge memory …``: long-term memory for the person (the agent has memory_search/_get)."""

from __future__ import annotations

from typing import Any

from IPython.core.error import UsageError

USAGE = """\
%forge memory search QUERY [-k N]   the best snippets of long-term memory (a DataFrame)
%forge memory get FILE [START [END]]  lines of a memory file, numbered
%forge memory sync                  bring the index up to date; say what changed
%forge memory path                  where the memory folder is"""


def memory_command(forge: Any, args: list[str]) -> Any:
    """Run one ``%forge memory`` subcommand against ``forge`` (a ``forge_jupyter.Forge``)."""
    if not args:
        raise UsageError(USAGE)
    command, rest = args[0], args[1:]
    memory = forge.memory
    if memory is None:
        raise UsageError("Long-term memory is off: %config Forge.memory_long_term = True "
                         "(or FORGE_MEMORY_LONG_TERM=true) turns it on.")
    if command == "search":
        k = 5
        if len(rest) >= 2 and rest[-2] in ("-k", "--k"):
            try:
                k = int(rest[-1])
            except ValueError:
                raise UsageError(f"-k takes a number of results, not {rest[-1]!r}") from None
            rest = rest[:-2]
        if not rest:
            raise UsageError("usage: %forge memory search QUERY [-k N]")
        frame = forge.memory_search(" ".join(rest), k=k)
        if frame.attrs.get("note"):
            print(f"Keyword-only search: {frame.attrs['note']}.")
        return frame
    if command == "get":
        if not 1 <= len(rest) <= 3:
            raise UsageError("usage: %forge memory get FILE [START [END]]")
        try:
            numbers = [int(x) for x in rest[1:]]
        except ValueError:
            raise UsageError("START and END are line numbers") from None
        start = numbers[0] if numbers else 1
        end = numbers[1] if len(numbers) > 1 else None
        lines = memory.read(rest[0]).splitlines()
        last = len(lines) if end is None else min(end, len(lines))
        for n in range(max(start, 1), last + 1):
            print(f"{n:>6}\t{lines[n - 1]}")
        return None
    if command == "sync":
        report = memory.sync()
        print(f"{memory.path}: {len(report.indexed)} file(s) indexed, {len(report.removed)} "
              f"removed, {report.unchanged} unchanged, {report.embedded} chunk(s) embedded.")
        for path, why in report.skipped:
            print(f"  left out {path}: {why}")
        if report.embedding_note:
            print(f"  keyword-only: {report.embedding_note}")
        return None
    if command == "path":
        print(memory.path)
        return None
    raise UsageError(f"unknown %forge memory command {command!r}\n\n{USAGE}")
