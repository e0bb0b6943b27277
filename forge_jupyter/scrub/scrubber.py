"""``Scrubber``: text in, the same text with secrets replaced by ``[secret:NAME]``; and
``valid_text``, which makes any text valid Unicode. See the package's docstring."""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel

from .rules import (
    ALTERNATIVES,
    ASSIGN,
    ASSIGNS,
    FIXED_LABEL,
    KIND,
    MIN_LENGTH,
    SECRET_NAME,
    SECRET_NAME_END,
    SHAPE_LABEL,
    SHORT,
    SHORTEST,
    TRIGGERS,
    UNSEPARATED,
    VALUE_GROUPS,
    harmless_name,
    looks_random,
    name_before,
)
from .spellings import has_password, trie_pattern, variants
from .stream import StreamScrubber


def _line_end(text: str, i: int) -> int:
    ends = [e for e in (text.find("\n", i), text.find("\r", i)) if e != -1]
    return min(ends) if ends else len(text)


# A process-wide set of values known to be secret (keys configured on a Forge): every
# scrubber built from the environment hides them too — exports, saved outputs, any session.
_remembered: dict[str, str] = {}


def remember(name: str, value: Any) -> None:
    """Make every later ``Scrubber.from_environment()`` hide ``value`` as ``[secret:name]``."""
    if isinstance(value, str) and len(value) >= MIN_LENGTH:
        _remembered[value] = name


def secret_params(params: dict[str, Any]) -> list[tuple[str, str]]:
    """The secret-named string values of litellm keyword arguments (``api_key``,
    ``aws_secret_access_key``, ``vertex_credentials``, …) as (name, value) pairs."""
    return [(k, v) for k, v in params.items()
            if isinstance(v, str) and len(v) >= MIN_LENGTH and SECRET_NAME.search(k)]


# ------------------------------------------------------------------------------ valid text


def valid_text(s: str) -> str:
    """``s`` as valid Unicode: lone surrogates become U+FFFD (cheap when ``s`` is valid)."""
    if s.isascii():
        return s
    try:
        s.encode("utf-8")
        return s
    except UnicodeEncodeError:  # surrogates: pairs rejoin, lone halves become U+FFFD
        return s.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def valid_data(value: Any) -> Any:
    """JSON-like data (dicts, lists, strings — keys too) with every string made valid."""
    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, dict):
        return {valid_text(k) if isinstance(k, str) else k: valid_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(valid_data(v) for v in value)
    return value


# ------------------------------------------------------------------------------ scrubbing


@functools.lru_cache(maxsize=4096)
def env_secret(name: str, value: str) -> bool:
    """Whether an environment variable's value is a secret: by its name, a password in it, or
    its look (``rules.looks_random``) unless the name is a harmless one (paths, locale, …)."""
    if len(value) < MIN_LENGTH:
        return False
    return bool(SECRET_NAME.search(name) or has_password(value)
                or (not harmless_name(name) and looks_random(value)))


class Scrubber:
    """Replaces secrets in text by ``[secret:NAME]``; ``secrets`` maps a name to its value."""

    def __init__(self, secrets: dict[str, str] | None = None) -> None:
        names: dict[str, str] = {}  # every spelling → the name it is shown as
        for name, value in (secrets or {}).items():
            if isinstance(value, str) and len(value) >= MIN_LENGTH:
                for v in variants(value):
                    names.setdefault(v, name)
        self.secrets = {k: v for k, v in (secrets or {}).items()
                        if isinstance(v, str) and len(v) >= MIN_LENGTH}
        self._names = names
        known = trie_pattern(names) if names else None
        self._pattern = re.compile("|".join(
            ([known] if known else [])
            + [f"{p}(?P<{g}>)" for g, p in ALTERNATIVES if g not in ASSIGNS]))
        self._known = tuple(names)
        # Where a known value can be: a run of the characters known values are made of (it
        # holds the whole value), then the trie (or, in a short run, its first characters).
        self._known_re = re.compile(known) if known else None
        alphabet = "".join(sorted({c for v in names for c in v if not c.isspace()}))
        self._runs = re.compile(f"[{re.escape(alphabet)}]{{{MIN_LENGTH},}}") if names else None
        self._heads = frozenset(v[:MIN_LENGTH] for v in names)
        self._multiline = any("\n" in v or "\r" in v for v in names)
        # A known value with whitespace in it can straddle a stream's cut: hold back that much.
        self._spaced = tuple(v for v in names if any(c.isspace() for c in v))
        self._hold_words = max((len(v) - 1 for v in self._spaced), default=0)
        self._hold_lines = max((len(v) - 1 for v in self._spaced if "\n" in v or "\r" in v),
                               default=0)

    @classmethod
    def from_environment(cls, extra: Iterable[tuple[str, str | None]] = ()) -> Scrubber:
        """The secrets of ``os.environ`` (every value that looks like one, and any under a
        secret name or holding a URL's password — ``env_secret``), remembered keys, and
        ``extra`` pairs."""
        found = tuple(sorted((k, v) for k, v in os.environ.items() if env_secret(k, v)))
        more = tuple(sorted((name, value) for value, name in _remembered.items()))
        more += tuple((k, v) for k, v in extra if isinstance(v, str) and len(v) >= MIN_LENGTH)
        return _cached(found + more)

    def __call__(self, text: str | None) -> str | None:
        if not text:
            return text
        text = valid_text(text)
        if len(text) < SHORTEST:
            return text
        if len(text) < SHORT:  # a streamed word: the regexes themselves are the quickest look
            return self._sub(text)
        windows = self._windows(text)
        if windows is None:
            return self._sub(text)
        out, pos = [], 0
        for start, end in windows:
            piece = text[start:end]
            clean = self._sub(piece)
            if clean is not piece and clean != piece:
                out += (text[pos:start], clean)
                pos = end
        return "".join((*out, text[pos:])) if out else text

    def _sub(self, text: str) -> str:
        """Two passes: the secrets themselves (known values, URLs, shapes …), then values by
        the name before them — which may be declined, so it must not hide a secret inside it
        from the first pass (a declined match consumes its text)."""
        return ASSIGN.sub(self._replace, self._pattern.sub(self._replace, text))

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where in ``text`` the two passes would find something (overlaps possible)."""
        return [m.span() for p in (self._pattern, ASSIGN) for m in p.finditer(text)]

    def _windows(self, text: str) -> list[tuple[int, int]] | None:
        """The lines of ``text`` where a secret could be — every match lies in one of them —
        merged and in order; None when the whole text must be read (a multi-line secret).

        The regexes read 20–50 MB a second; finding the few words every secret has around it
        (``key``, ``token``, ``://``, ``sk-``, a known value …) is several times faster, so
        only the lines with one of them are read by the regexes — unless they are a third of
        the text or more."""
        low = text.lower()
        if self._multiline or "private key-----" in low:
            return None
        found: list[tuple[int, int]] = []
        cr = "\r" in text
        budget = len(text) // 3  # past this, one pass over the whole text is cheaper
        triggers = TRIGGERS if ":" in text or "=" in text else UNSEPARATED
        for needle in triggers:
            i = low.find(needle)
            while i != -1:
                start, end = self._line(text, i, i + len(needle), cr)
                found.append((start, end))
                budget -= end - start
                if budget < 0:
                    return None
                i = low.find(needle, end)
        for i, j in self._known_spans(text):
            start, end = self._line(text, i, j, cr)
            found.append((start, end))
            budget -= end - start
            if budget < 0:
                return None
        if not found:
            return []
        found.sort()
        merged = [found[0]]
        for start, end in found[1:]:
            last_start, last_end = merged[-1]
            if start <= last_end:
                merged[-1] = (last_start, max(last_end, end))
            else:
                merged.append((start, end))
        return merged

    @staticmethod
    def _line(text: str, i: int, j: int, cr: bool) -> tuple[int, int]:
        """The line(s) around ``text[i:j]``."""
        start = text.rfind("\n", 0, i) + 1
        end = text.find("\n", j)
        end = len(text) if end == -1 else end
        if cr:  # "\r" ends lines too; looked for only where there is one, as a search that
            # finds nothing runs to the end of the text every time
            start = max(start, text.rfind("\r", 0, i) + 1)
            end = _line_end(text, j)
        return start, end

    def _known_spans(self, text: str) -> list[tuple[int, int]]:
        """Where in ``text`` a known value (any spelling) may be: each one lies in a run of
        the characters they are made of; a short run is looked up by its first characters,
        a long one (a base64 blob) by the trie."""
        if self._runs is None:
            return []
        out = []
        heads, size, known = self._heads, MIN_LENGTH, self._known_re
        for run in self._runs.finditer(text):
            i, j = run.span()
            if j - i <= 64:
                hit = any(text[k:k + size] in heads for k in range(i, j - size + 1))
            else:
                hit = known is not None and known.search(text, i, j) is not None
            if hit:
                out.append((i, j))
        for value in self._spaced:  # a value with a space in it is not in one run
            k = text.find(value)
            if k != -1:
                out.append((k, k + len(value)))
        return out

    def _replace(self, m: re.Match[str]) -> str:
        kind = m.lastgroup  # the alternative's closing group; none for a known value
        if kind is None:
            return f"[secret:{self._names[m.group()]}]"
        kind = KIND.get(kind, kind)
        if kind not in VALUE_GROUPS:
            return f"[secret:{SHAPE_LABEL.get(kind) or FIXED_LABEL[kind]}]"
        group = next(g for g in VALUE_GROUPS[kind] if m.group(g) is not None)
        value = m.group(group)
        text, at = m.string, m.start()
        whole = m.group()
        head, tail = whole[:m.start(group) - at], whole[m.end(group) - at:]
        label = FIXED_LABEL.get(kind)
        if kind == "assign":
            name, begin = name_before(text, at, quoted=group in ("dq", "sq"))
            secret = SECRET_NAME_END.search(name) if name else None
            in_query = begin > 0 and text[begin - 1] in "?&"
            if secret is None:
                counts = False
            elif group == "eq":  # unquoted: NAME=…, ?name=…, or name=… but not f(name=var)
                j = begin
                while j and text[j - 1] in " \t":
                    j -= 1
                counts = (in_query or (name.upper() == name and name.lower() != name)
                          or not (j and text[j - 1] in "(,"))
            elif group == "colon":  # unquoted: alone on its line
                line = max(text.rfind("\n", 0, begin), text.rfind("\r", 0, begin)) + 1
                counts = not text[line:begin].strip()
            else:
                counts = True
            if counts and secret.group("query") is not None:  # key=, sig=: only in a query
                counts = in_query and group == "eq"
            if not counts:  # not a secret's value (the first pass scrubbed what is inside)
                return whole
            label = name.strip(".-") or "secret"
        if "[secret:" in value:  # scrubbed already, inside (a URL's password)
            return whole
        if value in self._names:
            label = self._names[value]
        return f"{head}[secret:{label}]{tail}"

    def data(self, value: Any) -> Any:
        """JSON-like data with every string (dict keys too) scrubbed and valid."""
        if isinstance(value, str):
            return self(value)
        if isinstance(value, dict):
            return {self(k) if isinstance(k, str) else k: self.data(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self.data(v) for v in value)
        return value

    def row(self, row: Any, skip: frozenset[str] = frozenset()) -> Any:
        """A Message, Part or Event (any pydantic row) with every string field scrubbed and
        valid — the same object when nothing changed, else a copy."""
        changes = {}
        for name, value in row:
            if name in skip or value is None or isinstance(value, bool | int | float):
                continue
            if isinstance(value, BaseModel):
                clean = self.row(value)
            elif isinstance(value, list) and value and isinstance(value[0], BaseModel):
                clean = [self.row(v) for v in value]
                if all(a is b for a, b in zip(clean, value, strict=True)):
                    continue
            else:
                clean = self.data(value)
            if clean is not value and clean != value:
                changes[name] = clean
        return row.model_copy(update=changes) if changes else row

    def triggers(self) -> str:
        """A regular expression (RE2 syntax, to match ignoring case) that every text holding
        a secret matches: a cheap first look before the real scrub, e.g. in Arrow."""
        words = (*TRIGGERS, "private key-----", *self._known)
        return "|".join(re.escape(w) for w in words)

    def safe_prefix(self, text: str) -> str:
        """The longest prefix of ``text`` that no later text can turn into a secret (what a
        checkpoint of text still streaming may store)."""
        return text[:StreamScrubber(self)._cut(text)] if text else text

    def stream(self, *, lines: bool = False) -> StreamScrubber:
        """A scrubber for text that arrives in pieces (``lines``: cut only at line ends)."""
        return StreamScrubber(self, lines=lines)


@functools.lru_cache(maxsize=16)
def _cached(items: tuple[tuple[str, str], ...]) -> Scrubber:
    return Scrubber(dict(items))
