"""Permissions: rules of tool pattern × argument pattern × action (DESIGN §5).

A rule is ``Rule(tool="write", pattern="data/*", action="ask")``. Patterns are shell-style
wildcards (``fnmatch``, where ``*`` also crosses ``/``): for ``python`` they match the code and
for ``sql`` the statement (so ``"df.head*"`` is a prefix), for other tools the JSON of the
arguments, and for file tools a ``PathSubject``: the path normalized and made relative to the
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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

Action = Literal["allow", "deny", "ask"]
_RANK = {"allow": 0, "ask": 1, "deny": 2}
SUBJECT_ARGS = ("path", "code", "query", "sql", "pattern", "command")
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


@dataclass(frozen=True)
class Rule:
    tool: str = "*"
    pattern: str = "*"
    action: Action = "allow"

    def __post_init__(self) -> None:
        if self.action not in _RANK:
            raise ValueError(f"a rule's action is allow, deny or ask, not {self.action!r}")

    def matches_tool(self, tool: str) -> bool:
        return any(fnmatch.fnmatchcase(name, self.tool) for name in (tool, *SAME_RULES.get(tool, ())))

    def matches(self, tool: str, subject: Subject) -> bool:
        if not self.matches_tool(tool):
            return False
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
            tool, _, pattern = left.partition(":")
            return cls(tool.strip() or "*", pattern.strip() or "*", action.strip())  # type: ignore[arg-type]
        raise ValueError(f"not a permission rule: {value!r} (try Rule('write', 'data/*', 'ask'))")


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
