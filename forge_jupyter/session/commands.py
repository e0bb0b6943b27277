"""Commands: prompt templates the person runs by name (the SDK's ``command`` entry).

    .forge/commands/review.md        beside the notebook (wins by name)
    ~/.forge/commands/review.md      the person's own

    ---
    description: Review a function for bugs
    agent: plan
    model: openai/gpt-4o-mini
    ---
    Review $1 for bugs; focus on $ARGUMENTS.

``%%forge /review parse_dates edge cases`` (or ``session.command("review", "…")``) sends the
template with ``$ARGUMENTS`` (everything after the name) and ``$1``…``$9`` (its words, quotes
group) filled in, in one pass: text an argument brings in is never substituted again. A
template with no placeholder gets the arguments appended. Command files are untrusted input,
read with the skills' rules (skills/): a name is ``[A-Za-z0-9_-]`` (no ``..`` or ``/``), a file
must not lead outside its commands folder (links included; a project's command is a project
file, project_files.py: no link at all), is refused over ``MAX_FILE`` bytes and made valid Unicode; the front matter is ``key: value`` lines, never YAML code, and keys
other than description, agent and model are ignored (``%forge commands`` names them).
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InvalidOption, NotFound
from ..project_files import ProjectFileRefused, checked, project_root, read_project_file
from ..scrub import valid_text
from ..skills import (
    MAX_DESCRIPTION,
    MAX_FILE,
    NAME,
    _inside,
    bounded_text,
    front_matter,
    read_bounded,
)

if TYPE_CHECKING:
    from .host import Host

MAX_COMMANDS = 200
PROJECT_DIR = ".forge/commands"
KEYS = ("description", "agent", "model")
AGENT = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
MODEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}$")
PLACEHOLDER = re.compile(r"\$(ARGUMENTS|[1-9])(?![0-9])")


@dataclass(frozen=True)
class Command:
    name: str
    template: str
    description: str = ""
    agent: str | None = None
    model: str | None = None
    where: str = ""  # the file, resolved
    source: str = "project"  # project | user
    ignored: tuple[str, ...] = field(default=())  # front-matter keys not honoured

    def expand(self, arguments: str = "") -> str:
        """The prompt: the template with ``$ARGUMENTS`` and ``$1``…``$9`` filled in."""
        arguments = arguments.strip()
        try:
            words = shlex.split(arguments)
        except ValueError:  # an unbalanced quote: plain words, never an error
            words = arguments.split()
        used = False

        def fill(m: re.Match[str]) -> str:
            nonlocal used
            used = True
            if m.group(1) == "ARGUMENTS":
                return arguments
            n = int(m.group(1))
            return words[n - 1] if n <= len(words) else ""

        text = PLACEHOLDER.sub(fill, self.template)  # one pass: arguments are not re-read
        if not used and arguments:
            text = f"{text}\n\n{arguments}" if text else arguments
        return text


class Commands:
    """The commands under a root's ``.forge/commands`` and ``~/.forge/commands``."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = root
        self.folders = [("project", Path(root) / PROJECT_DIR),
                        ("user", Path.home() / ".forge" / "commands")]
        self.problems: list[str] = []

    def _candidates(self) -> dict[str, tuple[str, Path, Path]]:
        """name → (source, file, resolved folder) of the ``*.md`` files, the project's first."""
        found: dict[str, tuple[str, Path, Path]] = {}
        for source, base in self.folders:
            try:  # the project's folder: a project file (no link to another folder)
                if source == "project" and checked(self.root, PROJECT_DIR, "dir") is None:
                    continue
            except ProjectFileRefused as exc:
                said = f"{exc} No project command was loaded."
                if said not in self.problems:
                    self.problems.append(said)
                continue
            if not base.is_dir():
                continue
            real = base.resolve()
            for entry in sorted(base.iterdir())[:MAX_COMMANDS * 2]:
                if entry.suffix == ".md" and entry.stem not in found and len(found) < MAX_COMMANDS:
                    found[entry.stem] = (source, entry, real)
        return found

    def scan(self) -> dict[str, Command]:
        """Every command that loads; what does not is said in ``problems``."""
        self.problems = []
        out: dict[str, Command] = {}
        for name, (source, path, base) in self._candidates().items():
            try:
                out[name] = self._load(name, source, path, base)
            except (InvalidOption, NotFound) as exc:
                self.problems.append(str(exc))
        return out

    def names(self) -> list[str]:
        return sorted(n for n in self._candidates() if NAME.fullmatch(n))

    def get(self, name: str) -> Command:
        """The command ``name``, or an error saying why not and which commands there are."""
        if not isinstance(name, str) or not NAME.fullmatch(name):
            raise InvalidOption(f"{str(name)[:64]!r} is not a command name: names are letters, "
                                "digits, _ and - (no '..' or '/'). " + self._known())
        found = self._candidates().get(name)
        if found is None:
            raise NotFound(f"no command named {name!r}. {self._known()}")
        return self._load(name, *found)

    def _known(self) -> str:
        names = self.names()
        return (f"Commands: {', '.join('/' + n for n in names)}." if names else
                "There are no commands: write one as .forge/commands/NAME.md beside the notebook "
                "or ~/.forge/commands/NAME.md.")

    def _load(self, name: str, source: str, path: Path, base: Path) -> Command:
        if not NAME.fullmatch(name):
            raise InvalidOption(f"command file {path.name[:80]!r}: the name must be letters, "
                                "digits, _ and - (no '..' or '/')")
        if source == "project":  # a project file: never through a link (project_files.py)
            try:
                data = read_project_file(self.root, f"{PROJECT_DIR}/{path.name}", MAX_FILE + 1)
            except ProjectFileRefused as exc:
                raise InvalidOption(f"command {name!r}: {exc}") from None
            if data is None:
                raise NotFound(f"no command named {name!r}. {self._known()}")
            if len(data) > MAX_FILE:
                raise InvalidOption(f"command {name!r}: {path} is over {MAX_FILE // 1024} KB; a "
                                    "command is a prompt template, not a document")
            return self._parse(name, source, project_root(self.root) / PROJECT_DIR / path.name,
                               bounded_text(data))
        real = path.resolve()
        if not _inside(real, base) or real == base:
            raise InvalidOption(f"command {name!r}: {path} leads outside its commands folder "
                                f"{base}; a command file must be inside it (links included)")
        if not real.is_file():
            raise InvalidOption(f"command {name!r}: {path} is not a regular file")
        if real.stat().st_size > MAX_FILE:
            raise InvalidOption(f"command {name!r}: {path} is over {MAX_FILE // 1024} KB; a "
                                "command is a prompt template, not a document")
        return self._parse(name, source, real, read_bounded(real))

    def _parse(self, name: str, source: str, where: Path, text: str) -> Command:
        meta, body = front_matter(text)
        agent, model = meta.get("agent") or None, meta.get("model") or None
        if agent is not None and not AGENT.fullmatch(agent):
            raise InvalidOption(f"command {name!r}: agent {agent[:64]!r} is not an agent name")
        if model is not None and not MODEL.fullmatch(model):
            raise InvalidOption(f"command {name!r}: model {model[:64]!r} is not a model string "
                                "(e.g. openai/gpt-4o-mini)")
        description = " ".join((meta.get("description") or "").split())[:MAX_DESCRIPTION]
        return Command(name=name, template=body, description=description, agent=agent,
                       model=model, where=str(where), source=source,
                       ignored=tuple(k for k in meta if k not in KEYS))


def commands_of(forge: Host | Commands) -> Commands:
    """The owner's commands (``Forge.commands``), or ``forge`` when it is the commands."""
    return forge if isinstance(forge, Commands) else forge.commands


def expand_command(forge: Host | Commands, name: str, arguments: str,
                   options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(the prompt, the prompt's options) of running ``name`` with ``arguments``: the
    command's agent and model unless the options choose their own."""
    command = commands_of(forge).get(name)
    text = command.expand(valid_text(arguments or ""))
    if not text.strip():
        raise InvalidOption(f"command {name!r} ({command.where}) is empty: write its prompt "
                            "below the front matter")
    options = dict(options)
    if options.get("agent") is None and command.agent:
        options["agent"] = command.agent
    if options.get("model") is None and command.model:
        options["model"] = command.model
    return text, options
