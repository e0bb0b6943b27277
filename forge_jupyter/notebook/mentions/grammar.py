"""The mentions of a prompt: ``@name``, ``@In[N]``, ``@error``, ``@file:path``, ``@cell:<id>``
(docs/notebook-context.md, "Pointing at things"). Pure text in, text and mentions out: no
IPython, no files, nothing resolved here (resolve.py does that).

What is not a mention: ``@@`` (a literal ``@``), an ``@`` inside a word (an e-mail address,
``a@b``), anything inside a code fence or a backtick span (a decorator in a snippet), an ``@``
followed by no name. A spelling that starts a mention but cannot be one (``@In[0]``,
``@file:`` with no path, ``@cell:`` with no id) is a ``MentionError`` saying how to write it:
guessing what the person meant would attach the wrong thing, or nothing, silently.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Kind = Literal["name", "in", "error", "file", "cell"]
KINDS: tuple[Kind, ...] = ("name", "in", "error", "file", "cell")
MAX_COUNT = 10_000_000  # the largest In [N] a mention names
MAX_MENTIONS = 20  # mentions one prompt may hold
MAX_PATH = 4096  # characters of a @file: path
CELL_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")  # nbformat 4.5's (labextension/src/actions/prompts.ts)
ESCAPE_HINT = "Write @@ for a literal @."

# where code starts: a fence (``` or ~~~, three or more) or a run of backticks
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})", re.M)
_TICKS = re.compile(r"`+")
_CELL_RUN = re.compile(r"[A-Za-z0-9_-]+")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_IN = re.compile(r"In\[([^\]\n]{0,20})\]")
_PATH = re.compile(r'"([^"\n]*)"|(\S*)')
# a mention starts a word: an @ after one of these is part of something else (a@b.com, x.@y)
_GLUED = re.compile(r"[\w.@/\\+\-=%&#~`$*^|<>]")
_TRAILING = ".,;:!?)]}>'\"»”’"  # sentence punctuation after a path or id, not part of it


class MentionError(ValueError):
    """A prompt whose mentions cannot be read; the text says how to write them."""


@dataclass(frozen=True)
class Mention:
    """One thing the prompt points at: what kind, its value (a name, a count, a path, an id;
    "" for @error) and where it is written in the prompt."""

    kind: Kind
    value: str
    start: int
    end: int

    @property
    def written(self) -> str:
        """The mention as the person writes it (``@df``, ``@In[3]``, ``@file:a.csv``)."""
        if self.kind == "name":
            return f"@{self.value}"
        if self.kind == "in":
            return f"@In[{self.value}]"
        if self.kind == "error":
            return "@error"
        if self.kind == "file":
            return f'@file:"{self.value}"' if re.search(r"\s", self.value) else f"@file:{self.value}"
        return f"@cell:{self.value}"

    @property
    def key(self) -> tuple[Kind, str]:
        return self.kind, self.value


@dataclass(frozen=True)
class Parsed:
    """A prompt read for mentions: the text the model reads (``@@`` made ``@``, everything
    else as written) and the distinct mentions, in the order they first appear."""

    text: str
    mentions: tuple[Mention, ...]


def _code_spans(prompt: str) -> list[tuple[int, int]]:
    """The (start, end) of each code fence and backtick span: never read for mentions."""
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(prompt):
        fence = _FENCE.search(prompt, i)
        ticks = _TICKS.search(prompt, i)
        if fence is None and ticks is None:
            break
        if fence is not None and (ticks is None or fence.start(1) <= ticks.start()):
            mark = fence.group(1)
            line_end = prompt.find("\n", fence.end())
            if line_end < 0:  # a fence on the last line opens nothing
                spans.append((fence.start(1), len(prompt)))
                break
            close = re.compile(rf"^[ \t]*{re.escape(mark[0])}{{{len(mark)},}}[ \t]*$", re.M)
            end = close.search(prompt, line_end + 1)
            stop = end.end() if end is not None else len(prompt)  # unclosed: code to the end
            spans.append((fence.start(1), stop))
            i = stop
            continue
        assert ticks is not None
        run = ticks.group(0)
        close_at = re.compile(rf"(?<!`){run}(?!`)").search(prompt, ticks.end())
        if close_at is None:  # a lone backtick is just a character
            i = ticks.end()
            continue
        spans.append((ticks.start(), close_at.end()))
        i = close_at.end()
    return spans


def _strip_trailing(value: str) -> str:
    while value and value[-1] in _TRAILING:
        # a bracket closed inside the value stays: data(1).csv keeps its ")"
        if value[-1] in ")]}" and value.count(value[-1]) <= value.count("([{"[")]}".index(value[-1])]):
            break
        value = value[:-1]
    return value


def _one(prompt: str, at: int) -> tuple[Mention | None, int]:
    """The mention starting at ``prompt[at] == "@"`` and where reading goes on; (None, at + 1)
    when this @ starts none."""
    rest = at + 1
    if prompt.startswith("file:", rest):
        m = _PATH.match(prompt, rest + 5)
        assert m is not None
        quoted = m.group(1) is not None
        path = m.group(1) if quoted else _strip_trailing(m.group(2))
        end = m.end() if quoted else rest + 5 + len(path)
        if not path:
            raise MentionError("@file: needs a path under the notebook's folder, e.g. "
                               "@file:data/sales.csv (quote one with spaces: @file:\"my data.csv\"). "
                               + ESCAPE_HINT)
        if len(path) > MAX_PATH:
            raise MentionError(f"the path after @file: is {len(path):,} characters; a path has at "
                               f"most {MAX_PATH:,}.")
        return Mention("file", path, at, end), end
    if prompt.startswith("cell:", rest):
        m = _CELL_RUN.match(prompt, rest + 5)
        if m is None or not CELL_ID.fullmatch(m.group(0)):
            raise MentionError("@cell: needs a cell id (letters, digits, - and _, at most 64), as "
                               "Fix with Forge and Ask Forge write it: @cell:3f2a9c1e. "
                               + ESCAPE_HINT)
        value = m.group(0)
        end = rest + 5 + len(value)
        return Mention("cell", value, at, end), end
    if prompt.startswith("In[", rest):
        m = _IN.match(prompt, rest)
        digits = m.group(1).strip() if m else ""
        if m is None or not digits.isascii() or not digits.isdigit() \
                or not 1 <= int(digits) <= MAX_COUNT:
            raise MentionError(f"@In[N] names the cell that ran as In [N], N from 1 to "
                               f"{MAX_COUNT:,}: e.g. @In[3]. " + ESCAPE_HINT)
        return Mention("in", str(int(digits)), at, m.end()), m.end()
    m = _NAME.match(prompt, rest)
    if m is None:
        return None, rest  # "@ " or "@1": no mention, the @ stays as written
    end = m.end()
    if end < len(prompt) and not prompt[end].isascii() and prompt[end].isidentifier():
        return None, rest  # @naïve: not an ASCII name, and not half of one
    name = m.group(0)
    return Mention("error" if name == "error" else "name", "" if name == "error" else name,
                   at, end), end


def parse(prompt: str) -> Parsed:
    """``prompt``'s text and mentions (module docstring); ``MentionError`` when a mention is
    misspelled or the prompt holds a NUL."""
    if "\0" in prompt:
        raise MentionError("the prompt holds a NUL character, which no prompt can send: remove "
                           "it (it often comes with text pasted from a binary file).")
    code = _code_spans(prompt)
    out: list[str] = []
    found: dict[tuple[Kind, str], Mention] = {}
    i = escaped = 0  # escaped: where the last @@ ended (an @ right after it starts a mention)
    for start, end in [*code, (len(prompt), len(prompt))]:
        seg_end = start
        while i < seg_end:
            at = prompt.find("@", i, seg_end)
            if at < 0:
                out.append(prompt[i:seg_end])
                i = seg_end
                break
            out.append(prompt[i:at])
            if prompt.startswith("@@", at) and at + 1 < seg_end:
                out.append("@")
                i = escaped = at + 2
                continue
            if at > 0 and at != escaped and _GLUED.match(prompt[at - 1]):
                out.append("@")  # inside a word: an address, not a mention
                i = at + 1
                continue
            mention, nxt = _one(prompt, at)
            nxt = min(nxt, seg_end) if mention is None else nxt
            if mention is not None and mention.end > seg_end:  # ran into code: stop before it
                mention, nxt = None, at + 1
            if mention is not None:
                found.setdefault(mention.key, mention)
                if len(found) > MAX_MENTIONS:
                    raise MentionError(f"the prompt points at more than {MAX_MENTIONS} things; "
                                       "ask about fewer at once.")
            out.append(prompt[at:nxt])
            i = nxt
        out.append(prompt[start:end])
        i = max(i, end)
    return Parsed("".join(out), tuple(found.values()))
