"""Whether a re-executed tool call gave the result it gave when recorded (session/replay.py).

"Materially different" means what would change the agent's next step or the notebook's
variables: an error where there was none (or none where there was one), or another printed
output / value repr — which is where a different shape, dtype or number shows. What differs
between two runs of the same code by nature is ignored: object addresses (``0x7f…``), the
part and session ids in a truncated result's file name, the numbered name a traceback gives
the code (``<forge-cell-12>``), trailing whitespace.
"""

from __future__ import annotations

import re

from ..message import ToolPart

_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{6,}\b")
_IDS = re.compile(r"\b(prt|ses)_[0-9A-Za-z]+\b")
_CELL_NAME = re.compile(r"<forge-cell-\d+>")  # tools/python.py names each run's code so
_CLIP = 160


def normalized(text: str | None) -> str:
    text = _ADDRESS.sub("0x…", text or "")
    text = _IDS.sub(r"\1_…", text)
    text = _CELL_NAME.sub("<forge-cell>", text)
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def _first_difference(before: str, after: str) -> tuple[str, str]:
    a, b = before.splitlines() or [""], after.splitlines() or [""]
    for x, y in zip(a, b, strict=False):
        if x != y:
            return x, y
    if len(a) != len(b):
        return (a[len(b)] if len(a) > len(b) else "(nothing more)",
                b[len(a)] if len(b) > len(a) else "(nothing more)")
    return before, after


def _clip(line: str) -> str:
    line = line.strip()
    return line if len(line) <= _CLIP else line[:_CLIP - 1] + "…"


def difference(recorded: ToolPart, now: ToolPart) -> str | None:
    """None when ``now`` gave what ``recorded`` gave; else the difference, said in one line."""
    if recorded.state == "completed" and now.state == "error":
        lines = (now.error or "").strip().splitlines()  # a traceback ends with the error
        return f"it now fails where it succeeded: {_clip(lines[-1] if lines else 'an error')}"
    if recorded.state == "error" and now.state == "completed":
        return "it now succeeds where it failed when recorded"
    before = normalized(recorded.output if recorded.state == "completed" else recorded.error)
    after = normalized(now.output if now.state == "completed" else now.error)
    if before == after:
        return None
    was, is_ = _first_difference(before, after)
    return f"its output changed: recorded {_clip(was)!r}, now {_clip(is_)!r}"
