"""A turn as plain text: where no widget frontend answers (terminal IPython, nbclient and
nbconvert, a frontend without widgets, ``FORGE_WIDGET=off``).

Text streams as it comes; tools, notices and retries are one line each. Two rules keep the
result readable where stream outputs are kept apart (nbconvert renders each stream output as
its own block):

- with ``whole_lines`` (in a kernel) streamed text is written a whole line at a time, so no
  output ends in the middle of a sentence;
- a line that arrives while a paragraph is still streaming (a notice, a tool starting) waits
  for the paragraph to end instead of cutting through it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from typing import Any

ERROR_CHARS = 600  # a tool error's first paragraph is shown up to a sentence end within this


def seconds(value: float | None) -> str:
    from ..render import seconds as fmt

    return fmt(value)


def first_paragraph(text: str, limit: int = ERROR_CHARS) -> str:
    """The first paragraph of ``text``, cut at a sentence end (never mid-sentence) when long."""
    para = " ".join(text.strip().split("\n\n")[0].split())
    if len(para) <= limit:
        return para
    cut = max(para.rfind(". ", 0, limit), para.rfind("; ", 0, limit))
    return para[: cut + 1] + " …" if cut > 0 else para[:limit].rsplit(" ", 1)[0] + " …"


def replace_streamed(bundle: dict[str, Any]) -> Any:
    """The cell's outputs so far (a turn streamed as text where no view answered) replaced by
    ``bundle``, the turn's record; returns its display handle. Kept both, a saved notebook
    read the turn twice: once as streamed lines and once in the record and the answer (Out)."""
    from IPython.display import clear_output, display

    clear_output()
    return display(bundle, raw=True, display_id=True)


def decision_text(decision: dict[str, Any] | None) -> str:
    """Who answered an approval, and how, inside a line: "denied by you, in the widget — not
    now" (the record's and the widget's words, render.decision_text)."""
    from ..render import decision_text as said_by

    said = said_by(decision)
    return said[:1].lower() + said[1:]


class TextPrinter:
    """The turn as plain text on stdout: text as it streams, one line per tool step or notice."""

    def __init__(self, write: Callable[[str], Any] | None = None, *, whole_lines: bool = False,
                 show: Callable[[dict[str, Any]], Any] | None = None) -> None:
        self._write = write or (lambda s: sys.stdout.write(s))
        self.whole_lines = whole_lines
        self._show = show  # in a kernel: a tool's chart shown in place, between the lines
        self.printed: dict[str, int] = {}  # text part id → characters printed (or buffered)
        self.tool_states: dict[str, str] = {}
        self.decisions: dict[str, dict[str, Any]] = {}
        self.seen: set[str] = set()
        self.user_messages: set[str] = set()
        self.at_line_start = True
        self.last_text: str | None = None
        self.open_text: str | None = None  # a text part whose paragraph is still streaming
        self.held: list[tuple[str, bool]] = []  # lines waiting for that paragraph to end
        self.partial = ""  # streamed text after the last newline, not yet written (whole_lines)
        self.wrote_before = False  # something a new paragraph should stand apart from

    def write(self, s: str) -> None:
        if s:
            self._write(s)
            self.at_line_start = s.endswith("\n")

    def line(self, s: str, *, quiet: bool = False) -> None:
        if self.open_text is not None:
            self.held.append((s, quiet))
            return
        self._line(s, quiet)

    def _line(self, s: str, quiet: bool) -> None:
        self._end_partial()
        if not self.at_line_start:
            self.write("\n")
        self.write(s + "\n")
        self.last_text = None
        self.wrote_before = not quiet

    def ops(self, ops: Iterable[dict[str, Any]]) -> None:
        for op in ops:
            kind = op["op"]
            if kind == "message":
                self._message(op["message"])
            elif kind == "part":
                self._part(op["part"])
            elif kind == "delta":
                if op["id"] in self.printed and op["field"] == "text":
                    self._text(op["id"], op["text"])
            elif kind == "status":
                self._status(op)
            elif kind == "decision":
                self.decisions[op["id"]] = op
            elif kind == "output":
                text = op["text"].rstrip("\n")
                if text:
                    self.line("\n".join(f"  │ {ln}" for ln in text.split("\n")))
            elif kind == "display" and self._show is not None:
                self._end_partial()
                sys.stdout.flush()  # the lines before it reach the cell first
                self._show(op["data"])
            elif kind == "display":
                self.line(f"  [{op['data'].get('text/plain') or 'an image'}: shown in the widget]")
            elif kind == "approval" and op["request"].get("kind") == "question":
                self.line(f"? question: {op['request'].get('question')}")
            elif kind == "approval":
                r = op["request"]
                self.line(f"? {r['tool']} asks for approval (rule {r.get('rule')})")
            elif kind == "answered" and op["answer"] in ("answered", "unanswered"):
                said = op.get("text") if op["answer"] == "answered" else f"no answer — {op.get('reason')}"
                self.line(f"  answer: {said}")
            elif kind == "answered":
                reason = f" — {op['reason']}" if op.get("reason") else ""
                self.line(f"  approval: {op['answer']}{reason}")
            elif kind == "notice":
                self.line(f"note: {op['message']}")
            elif kind == "done":
                self.finish()

    def finish(self) -> None:
        self._close_text()
        self._end_partial()
        if not self.at_line_start:
            self.write("\n")

    # -- text -----------------------------------------------------------------------------

    def _text(self, part_id: str, text: str) -> None:
        if self.open_text not in (None, part_id):
            self._close_text()
        if self.last_text != part_id:
            self._end_partial()
            if not self.at_line_start:
                self.write("\n")
            if self.wrote_before:  # a blank line between paragraphs and after tool lines
                self.write("\n")
            self.last_text = part_id
        self.open_text = part_id
        self.printed[part_id] = self.printed.get(part_id, 0) + len(text)
        if not self.whole_lines:
            self.write(text)
            return
        self.partial += text
        cut = self.partial.rfind("\n")
        if cut >= 0:
            self.write(self.partial[: cut + 1])
            self.partial = self.partial[cut + 1:]

    def _end_partial(self) -> None:
        """The rest of a streamed line, ended: one write, so one output, a whole line."""
        if self.partial:
            rest, self.partial = self.partial, ""
            self.write(rest + "\n")

    def _close_text(self) -> None:
        """The streaming paragraph ended: what waited for it goes out now."""
        if self.open_text is None:
            return
        self.open_text = None
        held, self.held = self.held, []
        for s, quiet in held:
            self._line(s, quiet)

    # -- rows -----------------------------------------------------------------------------

    def _status(self, op: dict[str, Any]) -> None:
        if op.get("status") == "loading" and "loading" not in self.seen:
            self.seen.add("loading")
            message = (op.get("detail") or {}).get("message") or "Loading…"
            self.line(message, quiet=True)

    def _message(self, row: dict[str, Any]) -> None:
        if row.get("role") == "user":
            self.user_messages.add(row["id"])
            return
        # lazily: the printer starts before pydantic loads
        from ..message import STATUS_WORDS
        from ..render.numbers import status_words

        status = row.get("status")
        key = f"status:{row['id']}"
        if status in STATUS_WORDS and key not in self.seen:
            self.seen.add(key)
            why = (row.get("error") or {}).get("message") or status
            word, rest = status_words(status, why)
            self.line(f"✗ {word.lower()}{rest}")

    def _part(self, p: dict[str, Any]) -> None:
        pid, kind = p["id"], p["type"]
        if p.get("message_id") in self.user_messages and kind != "compaction":
            return
        if kind == "text":
            done = self.printed.setdefault(pid, 0)
            text = p.get("text") or ""
            if len(text) > done:
                self._text(pid, text[done:])
            if p.get("time_end") is not None and self.open_text == pid:
                self._close_text()
            return
        if self.open_text is not None:
            self._close_text()  # another block began: the paragraph before it is over
        if kind == "reasoning":
            if pid not in self.seen:
                self.seen.add(pid)
                self.line("· thinking…", quiet=True)
        elif kind == "tool":
            self._tool(p)
        elif kind == "retry" and pid not in self.seen:
            self.seen.add(pid)
            wait = f" after {seconds(p.get('wait'))}" if p.get("wait") else ""
            self.line(f"↻ retry {p.get('attempt')}{wait}: {p.get('error')}")
        elif kind == "compaction" and pid not in self.seen:
            self.seen.add(pid)
            self.line("─── context compacted ───")
        elif kind == "patch" and pid not in self.seen:
            self.seen.add(pid)
            for f in p.get("files") or ():
                self.line(f"± {f['path']} +{f.get('additions', 0)} -{f.get('deletions', 0)}")

    def _tool(self, p: dict[str, Any]) -> None:
        pid, state = p["id"], p.get("state")
        if self.tool_states.get(pid) == state or state == "pending":
            return
        self.tool_states[pid] = state
        name = p.get("tool")
        if state == "running":
            self.line(f"▸ {name} running")
        elif state == "completed":
            from ..message import duration

            d = duration(p)
            self.line(f"✓ {name} completed" + (f" in {seconds(d)}" if d is not None else ""))
        elif state == "error" and (p.get("metadata") or {}).get("permission") == "denied":
            decision = self.decisions.get(pid)
            if decision is None:
                self.line(f"✗ {name} denied: {first_paragraph(p.get('error') or '')}")
                return
            self.line(f"✗ {name} {decision_text(decision)}")
            if decision.get("by") == "forge":  # nobody could click: say how to allow it
                self.line(f"  To allow it: answer in a frontend that shows widgets, or add a "
                          f"permission rule, e.g. %config Forge.permissions = "
                          f"['{name}:*=allow']", quiet=True)
        elif state == "error":
            self.line(f"✗ {name} failed: {first_paragraph(p.get('error') or '')}")


def in_kernel() -> bool:
    """Whether this runs in a Jupyter kernel (not terminal IPython, not a script)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def printer_here() -> TextPrinter:
    """The printer for where the turn runs. In a kernel, stream outputs may be kept apart
    (nbconvert), so whole lines are written, and a tool's chart is displayed where its call is."""
    if not in_kernel():
        return TextPrinter()
    from IPython.display import display

    return TextPrinter(whole_lines=True, show=lambda bundle: display(bundle, raw=True))
