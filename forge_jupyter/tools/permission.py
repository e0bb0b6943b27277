"""Permissions: rules of tool pattern × argument pattern × action (DESIGN §5).

A rule is ``Rule(tool="write", pattern="data/*", action="ask")``. Patterns are shell-style
wildcards (``fnmatch``, where ``*`` also crosses ``/``) over the tool's argument: the JSON of
the arguments, or for file tools a ``PathSubject``: the path normalized and made relative to the
session's root (``./a``, ``w/../a``, ``a//b``, absolute paths into the root and links inside it
all become the one spelling the file has; see ``paths.locate``). Against a path the pattern is
normalized too: ``./data/*`` is ``data/*``, ``data/`` is ``data/*``, an absolute pattern inside
the root is made relative to it. A path that cannot be normalized is refused before any rule is
read: it is never matched raw.

Layers merge agent defaults → session → this prompt. Inside a layer the last matching rule
wins; across layers the most restrictive verdict wins (deny > ask > allow), so a later layer
can only narrow. A tool denied for every argument is left out of the turn's tool table: the
model never sees it. An ``ask`` that the person answered "allow for this session" is a grant
that satisfies later asks of the same tool and argument pattern; it never lifts a deny.
"""

from __future__ import annotations

import fnmatch
import json
import os
import posixpath
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from ..errors import InvalidOption

Action = Literal["allow", "deny", "ask"]
# What a tool's argument is: rules over a path are normalized (paths.locate), over code are
# whole-tool or exact. "data" is anything else (a question, a search, the JSON of the call).
ArgumentKind = Literal["path", "url", "name", "code", "data"]
_RANK = {"allow": 0, "ask": 1, "deny": 2}
SUBJECT_ARGS = ("path", "code", "query", "sql", "pattern", "command")
# A tool whose matched argument has one of these names runs what it is given (an MCP server's
# ``run_command(command=…)``, a custom ``def execute(code: str)``): it is a code tool.
CODE_ARGS = frozenset({"code", "sql", "command", "cmd", "script"})
# The one declaration of each tool's argument kind. The builtins are here, so a rule is judged
# before any Forge built its tools; a custom or MCP tool adds itself when it is made
# (``Tool.argument``, ``declare_argument``). ``shell`` is the person's command record.
ARGUMENT_KINDS: dict[str, ArgumentKind] = {
    "python": "code", "sql": "code", "shell": "code",
    "read": "path", "list": "path", "glob": "path", "grep": "path", "write": "path",
    "edit": "path", "apply_patch": "path", "webfetch": "url", "variables": "name",
    "history": "data", "task": "data", "question": "data",
}
_WILDCARDS = frozenset("*?[")
# apply_patch is edit and write for GPT-5-family models: a rule (or a grant) written for edit
# or write holds for it too, so changing the model never lifts a protection on a file.
SAME_RULES: dict[str, tuple[str, ...]] = {"apply_patch": ("edit", "write")}


@dataclass(frozen=True)
class PathSubject:
    """What a file tool's rules match: its path, normalized (``paths.locate``)."""

    path: str  # POSIX, relative to ``root`` ("." is the root); absolute only outside it (read's saved outputs)
    root: str  # the session's root, resolved
    fold_case: bool = False  # the root's file system ignores case: so does matching

    def __str__(self) -> str:
        return self.path


Subject = str | PathSubject


@lru_cache(maxsize=1024)
def path_pattern(pattern: str, root: str, fold_case: bool = False) -> str:
    """A rule's pattern as it applies to a normalized path under ``root``."""
    if pattern.endswith("/"):
        pattern += "*"  # a folder's contents
    absolute = pattern.startswith("/")
    norm = posixpath.normpath(pattern)
    if absolute:
        norm = "/" + norm.lstrip("/")  # POSIX keeps a leading "//"; a path never has one
        norm = _under_root(norm, root) or _under_root(_real_prefix(norm), root) or norm
    return norm.casefold() if fold_case else norm


def _under_root(pattern: str, root: str) -> str | None:
    if pattern == root:
        return "."
    if pattern.startswith(root.rstrip("/") + "/"):
        return pattern[len(root.rstrip("/")) + 1:]
    return None


def _real_prefix(pattern: str) -> str:
    """``pattern`` with its literal leading folders resolved (``/tmp/x/*`` → ``/private/tmp/x/*``)."""
    parts = pattern.split("/")
    n = 0
    while n < len(parts) - 1 and not _WILDCARDS & set(parts[n]):
        n += 1
    return posixpath.join(os.path.realpath("/".join(parts[:n]) or "/"), *parts[n:])


def _everything(pattern: str) -> bool:
    return pattern.strip("*") == ""  # "*", "**": every argument


class CodePatternRefused(InvalidOption):
    """A rule that would pattern-match a code tool's argument (``python:df.head*=allow``)."""

    def __init__(self, message: str, tool: str) -> None:
        super().__init__(message)
        self.tool = tool


def declare_argument(tool: str, kind: ArgumentKind) -> None:
    """Record what ``tool``'s argument is; a code tool's rules are judged by it from now on.
    A name once declared code stays code (a later tool of that name cannot loosen it)."""
    if ARGUMENT_KINDS.get(tool) != "code":
        ARGUMENT_KINDS[tool] = kind


def argument_kind(tool: str) -> ArgumentKind:
    return ARGUMENT_KINDS.get(tool, "data")


def kind_of_arguments(parameters: dict[str, Any], subject_arg: str | None = None) -> ArgumentKind:
    """A tool's argument kind from its schema: code when what its rules match is code — the
    argument named like code (``subject_arg``, else the first of SUBJECT_ARGS it has), or,
    with none of those, the JSON of all its arguments when one of them is."""
    props = parameters.get("properties") if isinstance(parameters, dict) else None
    names = list(props) if isinstance(props, dict) else []
    arg = subject_arg or next((n for n in SUBJECT_ARGS if n in names), None)
    if arg is None:
        return "code" if any(n in CODE_ARGS for n in names) else "data"
    return "code" if arg in CODE_ARGS else "path" if arg == "path" else "data"


_ESCAPED = re.compile(r"\[([*?\[])\]")  # fnmatch's spelling of a literal *, ? or [


def exact_text(pattern: str) -> str | None:
    """The text a pattern matches when it matches one text only (wildcard characters written
    ``[*]``, ``[?]``, ``[[]``), else None."""
    plain = _ESCAPED.sub("", pattern)
    return None if _WILDCARDS & set(plain) else _ESCAPED.sub(r"\1", pattern)


def normal_code(code: str) -> str:
    """Code as an exact rule compares it: one kind of line end, no space around the whole."""
    return code.replace("\r\n", "\n").replace("\r", "\n").strip()


def _is_code_tool(tool: str) -> bool:
    return any(argument_kind(n) == "code" for n in (tool, *SAME_RULES.get(tool, ())))


@dataclass(frozen=True)
class Rule:
    tool: str = "*"
    pattern: str = "*"
    action: Action = "allow"

    def __post_init__(self) -> None:
        if self.action not in _RANK:
            raise ValueError(f"a rule's action is allow, deny or ask, not {self.action!r}")
        self.check()

    def check(self) -> None:
        """Refuse a rule that would pattern-match code (called again when a turn's rules are
        gathered: a tool declared after the rule was made is judged then)."""
        if _everything(self.pattern) or exact_text(self.pattern) is not None:
            return
        if _WILDCARDS & set(self.tool) or not _is_code_tool(self.tool):
            return  # a tool pattern never applies a wildcard to a code tool (see matches)
        raise CodePatternRefused(
            f"permission rule {self.tool}:{self.pattern}={self.action} is refused: {self.tool}'s "
            f"argument is code, and a wildcard over code matches whatever comes with it "
            f"(`df.head(); anything`). Write {self.tool}={self.action} for every call, or one "
            f"exact call's whole code with no wildcard ({self.tool}:<the code>={self.action}; a "
            f"literal *, ? or [ in it is written [*], [?], [[]).", self.tool)

    def matches_tool(self, tool: str) -> bool:
        return any(fnmatch.fnmatchcase(name, self.tool) for name in (tool, *SAME_RULES.get(tool, ())))

    def matches(self, tool: str, subject: Subject) -> bool:
        if not self.matches_tool(tool):
            return False
        if not isinstance(subject, PathSubject) and _is_code_tool(tool):
            if _everything(self.pattern):
                return True
            exact = exact_text(self.pattern)
            if exact is None:
                return False  # never a pattern over code: the rule does not apply (check)
            return normal_code(subject) == normal_code(exact)
        if isinstance(subject, PathSubject):
            path = subject.path.casefold() if subject.fold_case else subject.path
            return fnmatch.fnmatchcase(path, path_pattern(self.pattern, subject.root, subject.fold_case))
        return fnmatch.fnmatchcase(subject, self.pattern)

    def __str__(self) -> str:
        return f"{self.tool}({self.pattern}) → {self.action}"

    @classmethod
    def parse(cls, value: Any) -> Rule:
        """A Rule from a Rule, a dict, a (tool, pattern, action) tuple or "tool:pattern=action"."""
        if isinstance(value, Rule):
            return value
        if isinstance(value, dict):
            return cls(**value)
        if isinstance(value, list | tuple):
            return cls(*value)
        if isinstance(value, str) and "=" in value:
            left, action = value.rsplit("=", 1)
            tool, _, pattern = left.partition(":")  # "python=allow": the whole tool
            return cls(tool.strip() or "*", pattern.strip() or "*", action.strip())  # type: ignore[arg-type]
        raise ValueError(f"not a permission rule: {value!r} (try Rule('write', 'data/*', 'ask'))")


def stored_rule(value: Any) -> Rule:
    """A rule read back from a stored row: one that pattern-matches code (written before such
    rules were refused) becomes "ask" for the whole tool — never a grant, never a lost turn."""
    try:
        return Rule.parse(value)
    except CodePatternRefused as exc:
        return Rule(exc.tool, "*", "ask")


def subject_of(args: dict[str, Any], subject_arg: str | None = None) -> str:
    """The argument a rule's pattern is matched against."""
    if subject_arg and isinstance(args.get(subject_arg), str):
        return args[subject_arg]
    for name in SUBJECT_ARGS:
        if isinstance(args.get(name), str):
            return args[name]
    return json.dumps(args, sort_keys=True)


@dataclass(frozen=True)
class Verdict:
    action: Action
    rule: Rule | None  # the rule that decided, for the person to read
    layer: str | None


class Permissions:
    """Layered rules for one turn: [(layer name, rules), …] from widest to narrowest."""

    def __init__(self, layers: Sequence[tuple[str, Sequence[Rule]]] = (),
                 grants: Iterable[Rule] = ()) -> None:
        self.layers = [(name, [Rule.parse(r) for r in rules]) for name, rules in layers]
        for _name, rules in self.layers:
            for rule in rules:
                rule.check()  # a code tool declared since the rule was made
        self.grants = list(grants)

    def evaluate(self, tool: str, subject: Subject) -> Verdict:
        verdict = Verdict("allow", None, None)
        for name, rules in self.layers:
            found = None
            for rule in rules:
                if rule.matches(tool, subject):
                    found = rule
            if found is not None and _RANK[found.action] >= _RANK[verdict.action]:
                verdict = Verdict(found.action, found, name)
        if verdict.action == "ask" and any(g.matches(tool, subject) for g in self.grants):
            return Verdict("allow", next(g for g in self.grants if g.matches(tool, subject)), "granted")
        return verdict

    def strictest(self, tool: str, subjects: Sequence[Subject]) -> tuple[Verdict, Subject]:
        """The most restrictive verdict over ``subjects`` (every path of a patch), with the
        subject that drew it (the first, when all are alike)."""
        found = [(self.evaluate(tool, s), s) for s in subjects]
        return max(found, key=lambda vs: _RANK[vs[0].action])  # max keeps the first of equals

    def denied_for_all(self, tool: str) -> bool:
        """True when some layer denies the tool whatever its arguments (it leaves the table)."""
        for _name, rules in self.layers:
            state = None
            for rule in rules:
                if not rule.matches_tool(tool):
                    continue
                if _everything(rule.pattern):
                    state = rule.action
                elif rule.action != "deny" and state == "deny":
                    state = "partly"  # a narrower allow/ask after a blanket deny keeps it visible
            if state == "deny":
                return True
        return False


def agent_defaults(mode: str, mutating: Iterable[str]) -> list[Rule]:
    """The ``build`` agent asks before mutating tools; ``plan`` denies them."""
    action: Action = "deny" if mode == "plan" else "ask"
    return [Rule(name, "*", action) for name in sorted(mutating)]
