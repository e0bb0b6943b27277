"""Skills: folders with a ``SKILL.md``, loaded on demand (progressive disclosure).

    .forge/skills/plot-style/SKILL.md        beside the notebook (wins by name)
    ~/.forge/skills/plot-style/SKILL.md      the person's own

    ---
    name: plot-style
    description: How this team styles matplotlib figures (colours, fonts, sizes).
    ---
    Instructions the model reads when it uses the skill…

The model sees only each skill's name and description, in the ``skill`` tool's description;
the instructions enter the context when it calls ``skill(name=…)``, and a file of the skill's
folder when it calls ``skill(name=…, file=…)`` — so a hundred skills cost a hundred lines, not
a hundred documents. Skill files are untrusted input: a name must be ``[A-Za-z0-9_-]`` (so no
``..`` or ``/``), a skill folder or file must not lead outside its skills folder (links
included), files are read up to ``MAX_FILE`` bytes and made valid Unicode, and descriptions
are cut to ``MAX_DESCRIPTION`` characters. A project's skills are project files
(project_files.py): a link anywhere — ``.forge/skills`` itself, a skill's folder, a file — is
refused, whether it leads inside or out.
"""

from __future__ import annotations

import itertools
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ToolError
from ..project_files import ProjectFileRefused, checked, project_root, read_project_file
from ..scrub import valid_text
from ..tools.base import Tool, ToolContext, ToolResult
from ..tools.registry import ToolRegistry

MAX_SKILLS = 100
MAX_FILE = 256 * 1024
MAX_DESCRIPTION = 1024
MAX_LISTED_FILES = 50
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
TOOL = "skill"
PROJECT_DIR = ".forge/skills"


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    folder: Path  # resolved
    source: str  # project | user
    project: Path | None = None  # a project's skill: its files are project files (below)

    def read(self, rel: str) -> str:
        """The file ``rel`` of the skill's folder: a project's reached as a project file
        (project_files.py: no link anywhere, nothing outside), the person's own resolved and
        kept inside the folder (links inside it allowed)."""
        if self.project is None:
            return read_bounded(self.folder / rel)
        data = read_project_file(self.project, f"{self.folder.relative_to(self.project)}/{rel}",
                                 MAX_FILE + 1)
        if data is None:
            raise FileNotFoundError(rel)
        return bounded_text(data)


def read_bounded(path: Path) -> str:
    with open(path, "rb") as fh:
        return bounded_text(fh.read(MAX_FILE + 1))


def bounded_text(data: bytes) -> str:
    """The first ``MAX_FILE`` bytes of a file read as ``MAX_FILE + 1`` of them, as text."""
    text = valid_text(data[:MAX_FILE].decode("utf-8", "replace"))
    return text + ("\n… [cut: the file is over 256 KB]" if len(data) > MAX_FILE else "")


def front_matter(text: str) -> tuple[dict[str, str], str]:
    """(the ``key: value`` pairs between ``---`` lines, the body after them)."""
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        return {}, text
    meta: dict[str, str] = {}
    last = None
    for i, line in enumerate(lines[1:], start=1):
        if line.strip() == "---":
            return meta, "\n".join(lines[i + 1:]).strip()
        m = re.match(r"^([A-Za-z_][\w-]*)\s*:\s*(.*)$", line)
        if m:
            last = m.group(1).lower()
            meta[last] = m.group(2).strip().strip("'\"") if m.group(2).strip() not in (">", "|") else ""
        elif last and line.startswith((" ", "\t")):  # a folded continuation line
            meta[last] = (meta[last] + " " + line.strip()).strip()
    return {}, text  # no closing line: not front matter


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


class Skills:
    """The skills found under a root's ``.forge/skills`` and ``~/.forge/skills``."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = root
        self.folders = [("project", Path(root) / PROJECT_DIR),
                        ("user", Path.home() / ".forge" / "skills")]
        self.found: dict[str, Skill] = {}
        self.problems: list[str] = []
        self._tool: Tool | None = None

    def scan(self) -> dict[str, Skill]:
        found: dict[str, Skill] = {}
        self.problems = []
        for source, base in self.folders:
            try:
                if source == "project" and checked(self.root, PROJECT_DIR, "dir") is None:
                    continue
            except ProjectFileRefused as exc:
                self.problems.append(f"{exc} No project skill was loaded.")
                continue
            if not base.is_dir():
                continue
            real_base = base.resolve()
            for entry in sorted(base.iterdir())[:MAX_SKILLS * 2]:
                skill = self._load(entry, real_base, source)
                if skill is not None and skill.name not in found and len(found) < MAX_SKILLS:
                    found[skill.name] = skill
        self.found = found
        return found

    def _load(self, entry: Path, base: Path, source: str) -> Skill | None:
        md = entry / "SKILL.md"
        project = project_root(self.root) if source == "project" else None
        try:
            if project is not None:  # a project's skill: no link, at any depth (project_files)
                if checked(project, f"{PROJECT_DIR}/{entry.name}", "dir") is None:
                    return None
                folder = project / PROJECT_DIR / entry.name
                if checked(project, f"{PROJECT_DIR}/{entry.name}/SKILL.md") is None:
                    return None
            else:
                folder = entry.resolve()
                if not entry.is_dir() or not _inside(folder, base) or not md.is_file():
                    return None
                if not _inside(md.resolve(), folder):
                    self.problems.append(f"skill {entry.name!r}: SKILL.md leads outside its folder")
                    return None
            meta, _ = front_matter(Skill(entry.name, "", folder, source, project).read("SKILL.md"))
        except ProjectFileRefused as exc:
            self.problems.append(f"skill {entry.name[:64]!r}: {exc}")
            return None
        except (OSError, ValueError):
            return None
        name = meta.get("name") or entry.name
        if not NAME.fullmatch(name):
            self.problems.append(f"skill folder {entry.name[:64]!r}: name {name[:64]!r} must be "
                                 "letters, digits, _ and - (no '..' or '/')")
            return None
        description = (meta.get("description") or "").strip()[:MAX_DESCRIPTION]
        if not description:
            self.problems.append(f"skill {name!r} has no description in its front matter")
            return None
        return Skill(name, " ".join(description.split()), folder, source, project)

    def sync(self, registry: ToolRegistry) -> None:
        """Offer the ``skill`` tool listing what is on disk now (none: no tool)."""
        current = registry.get(TOOL)
        if current is not None and current is not self._tool:
            return  # someone registered their own tool named "skill": theirs stays
        found = self.scan()
        if not found:
            registry.unregister(TOOL)
            self._tool = None
            return
        self._tool = registry.register(self.tool(found))

    def tool(self, found: dict[str, Skill]) -> Tool:
        listing = "\n".join(f"- {s.name}: {s.description}" for s in found.values())
        description = (
            "Load a skill: instructions for a kind of task, written by the person or their "
            "team. Call it with the skill's name before doing such a task and follow what it "
            "says; with `file` it reads one file of the skill's folder (named in the "
            f"instructions).\nAvailable skills:\n{listing}")
        parameters = {
            "type": "object",
            "properties": {
                "name": {"type": "string", "enum": sorted(found)},
                "file": {"type": "string", "description": "a file of the skill's folder, "
                         "relative to it (optional)"},
            },
            "required": ["name"],
            "additionalProperties": False,
        }

        async def execute(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
            from ..tools.threads import run_in_tool_thread

            return await run_in_tool_thread(self.load, args["name"], args.get("file"),
                                            name=TOOL, stop=ctx.stop)

        return Tool(name=TOOL, description=description, parameters=parameters, execute=execute)

    def load(self, name: str, file: str | None = None) -> ToolResult:
        skill = self.found.get(name)
        if skill is None:
            raise ToolError(f"no skill named {name!r}; available: {', '.join(self.found) or 'none'}")
        if file:
            return ToolResult(self._file(skill, file), title=f"skill {name}: {file}"[:120])
        _, body = front_matter(skill.read("SKILL.md"))
        walked = itertools.islice(skill.folder.rglob("*"), 10 * MAX_LISTED_FILES)
        files = sorted(str(p.relative_to(skill.folder)) for p in walked
                       if p.is_file() and p.name != "SKILL.md"
                       and not (skill.project is not None and p.is_symlink()))
        text = f"# Skill: {name}\n\n{body}"
        if files:
            shown = "\n".join(f"- {f}" for f in files[:MAX_LISTED_FILES])
            more = len(files) - MAX_LISTED_FILES
            text += (f"\n\nFiles of this skill (read one with skill(name={name!r}, file=…)):\n"
                     + shown + (f"\n… and {more} more" if more > 0 else ""))
        return ToolResult(text, title=f"skill {name}", metadata={"skill": name})

    def _file(self, skill: Skill, file: str) -> str:
        rel = file.strip().replace("\\", "/")
        target = (skill.folder / rel).resolve()
        if os.path.isabs(rel) or not _inside(target, skill.folder) or target == skill.folder:
            raise ToolError(f"{file!r} is not a file of skill {skill.name!r}: a skill's files are "
                            "named relative to its folder and never lead outside it")
        if not target.is_file():
            raise ToolError(f"skill {skill.name!r} has no file {file!r}")
        try:
            return skill.read(rel)
        except ProjectFileRefused as exc:
            raise ToolError(f"{file!r} of skill {skill.name!r} was not read: {exc}") from None
        except FileNotFoundError:
            raise ToolError(f"skill {skill.name!r} has no file {file!r}") from None

    def names(self) -> list[str]:
        return sorted(self.found)
