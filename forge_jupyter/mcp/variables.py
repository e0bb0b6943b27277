"""``${…}`` in a server's configuration, as the clients people copy from spell it — in one place.

    ${VAR}  ${env:VAR}        the kernel's environment (Claude Desktop; VS Code's env: form)
    ${VAR:-default}           the default when VAR is unset or empty (Claude Code)
    ${workspaceFolder}        the notebook's folder (VS Code): JPY_SESSION_NAME's folder when
                              the kernel knows its notebook, else the project's folder
    ${workspaceFolderBasename} ${userHome}
    $${…}                     the text ``${…}`` itself

VS Code's ``${input:…}`` asks the person in a prompt box forge does not have, and any other
``${…}`` would otherwise reach the server as literal text (a ``--repository ${workspaceFolder}``
that names nothing): either leaves that server out, with a problem that says what to write
instead. A problem names variables, never their values (they are often keys).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..project_files import project_root

# $${…} first (a literal), then ${…}: the alternation keeps the two from overlapping
_FORM = re.compile(r"\$\$\{([^}]*)\}|\$\{([^}]*)\}")
_NAME = re.compile(r"^(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?$", re.S)
KNOWN = "${VAR}, ${env:VAR}, ${VAR:-default}, ${workspaceFolder}, ${userHome}; $${…} for the text"


class Unsupported(ValueError):
    """A ``${…}`` forge cannot fill: the server it is in is left out (the message says why)."""


def workspace_folder(root: str | os.PathLike[str]) -> str:
    """The notebook's folder: where JPY_SESSION_NAME (the notebook Jupyter runs) is, else the
    project's folder the Forge was given."""
    notebook = os.environ.get("JPY_SESSION_NAME")
    if notebook:
        return str(Path(os.path.abspath(notebook)).parent)
    return str(project_root(root))


def expand(value: str, where: str, problems: list[str], workspace: str) -> str:
    """``value`` with its ``${…}`` filled; an unset variable is left empty (said in
    ``problems``); ``Unsupported`` for a form forge cannot fill."""

    def fill(m: re.Match[str]) -> str:
        if m.group(1) is not None:
            return "${" + m.group(1) + "}"
        inner = m.group(2)
        if inner == "workspaceFolder":
            return workspace
        if inner == "workspaceFolderBasename":
            return Path(workspace).name
        if inner == "userHome":
            return str(Path.home())
        if inner.startswith("input:"):
            raise Unsupported(
                f"{where} asks for ${{{inner[:60]}}}, which VS Code fills by asking in a prompt "
                "box; forge cannot ask. Set the value in the kernel's environment (an "
                "environment variable, e.g. in the shell that starts Jupyter) and write "
                "${env:NAME} instead; the server was left out")
        named = _NAME.match(inner)
        if named is None:
            raise Unsupported(
                f"{where} has ${{{inner[:60]}}}, which forge cannot fill (it knows {KNOWN}); "
                "write one of those, or put the value in an environment variable and write "
                "${env:NAME}; the server was left out")
        name, default = named.groups()
        got = os.environ.get(name)
        if default is not None:
            return got if got else default
        if got is None:
            problems.append(f"{where} names ${{{name}}}, which is not set in the kernel's "
                            "environment (it was left empty; ${" + name + ":-default} gives a "
                            "default)")
            return ""
        return got

    return _FORM.sub(fill, value)
