"""``%%forge /name args``, ``%forge commands`` and ``%forge shell CMD`` (session/commands.py,
session/shell.py): the person's own commands in a notebook.

In ``%%forge -m MODEL /review parse_dates`` the options come before the first word starting
with ``/``; that word names the command, the rest of the line is its arguments, and the cell
below the line is appended to the prompt. ``{var}`` is filled in the person's text — the
arguments and the cell — exactly as in any ``%%forge`` cell, and before the template is filled:
the template is taken literally (a command file never reads notebook variables, and its braces
are plain text), and what a variable brings in is never substituted again.
"""

from __future__ import annotations

import os
import re
from typing import Any

from IPython.core.error import UsageError

from ..errors import ForgeError
from ..session.commands import Commands, commands_of, expand_command

COMMAND_WORD = re.compile(r"(?:^|\s)/(?=\S)")

NO_COMMANDS = ("No commands found. A command is a Markdown prompt template, "
               ".forge/commands/NAME.md beside the notebook or ~/.forge/commands/NAME.md, with "
               "optional front matter (description, agent, model) and $ARGUMENTS, $1…$9 where "
               "the arguments go; run it with %%forge /NAME ARGS.")


def split_line(line: str) -> tuple[str, str, str] | None:
    """(the options, the command's name, its arguments) of a ``%%forge`` line naming a
    command; None when it names none."""
    m = COMMAND_WORD.search(line)
    if m is None:
        return None
    name, _, arguments = line[m.end():].partition(" ")
    return line[:m.start()], name.strip(), arguments.strip()


def command_prompt(controller: Any, opts: Any, name: str, arguments: str, body: str,
                   interpolate: Any, namespace: dict[str, Any]) -> str:
    """The prompt of ``%%forge /name arguments`` with ``body`` below; sets the cell's agent
    and model from the command's front matter where the cell gives none."""
    forge = controller.forge if controller.built else None
    root = forge.root if forge is not None and forge.root else os.getcwd()
    commands = commands_of(forge) if forge is not None else Commands(root)
    arguments, body = interpolate(arguments, namespace), interpolate(body, namespace).strip()
    try:
        text, options = expand_command(commands, name, arguments,
                                       {"agent": opts.agent, "model": opts.model})
    except ForgeError as exc:
        raise UsageError(str(exc)) from None
    opts.agent, opts.model = options.get("agent"), options.get("model")
    return f"{text}\n\n{body}" if body else text


def commands_command(forge: Any, args: list[str]) -> Any:
    """``%forge commands``: a DataFrame of the commands (name, description, agent, model,
    where); what could not be read is printed below it."""
    import pandas as pd

    if args:
        raise UsageError("usage: %forge commands")
    commands = commands_of(forge)
    found = commands.scan()
    for problem in commands.problems:
        print(f"problem: {problem}")
    for c in found.values():
        if c.ignored:
            print(f"/{c.name}: front matter {', '.join(c.ignored)} ignored (only description, "
                  "agent and model are read)")
    if not found:
        print(NO_COMMANDS)
        return None
    rows = [("/" + c.name, c.description, c.agent or "", c.model or "", c.where)
            for c in found.values()]
    return pd.DataFrame(rows, columns=["name", "description", "agent", "model", "where"]
                        ).set_index("name")


def shell_command(controller: Any, rest: str) -> Any:
    """``%forge shell CMD``: run CMD in the current session's root; the result shows the
    output and exit code, and the model sees both at the next prompt."""
    if not rest.strip():
        raise UsageError("usage: %forge shell COMMAND  (runs in the session's folder, within "
                         "Forge.shell_timeout seconds; the model sees it next turn)")
    try:
        return controller.current().shell(rest)
    except ForgeError as exc:
        raise UsageError(str(exc)) from None
