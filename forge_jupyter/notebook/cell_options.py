"""The ``%%forge`` cell's options: the parser, its usage line and ``--tools`` (docs/notebook.md).

A bad option is a one-line usage message, never a traceback or an exit; a mistyped one says
which option was probably meant.
"""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Iterable

from IPython.core.error import UsageError

CELL_USAGE = """\
%%forge [-s NAME|ID] [--new] [-m MODEL] [-a AGENT] [--tools python=false,sql=true] [--budget USD] [--max-tokens N] [--async] [--live|--replay] [--compare M1,M2] [/COMMAND ARGS]
<prompt — {name} inserts a notebook variable, {{ and }} are literal braces; after /COMMAND, appended to its template>"""


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean `--model`?)`` for a word close to one of ``choices``, else ``""``."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean `{close[0]}`?)" if close else ""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # a usage message, never a traceback or an exit
        head, sep, rest = message.partition("unrecognized arguments: ")
        if sep:  # a typo'd option: name the one it was probably meant to be
            options = [o for o in self._option_string_actions if o.startswith("--")]
            hints = [did_you_mean(w.split("=")[0], options) for w in rest.split() if w.startswith("-")]
            message += "".join(hints[:1])
        raise UsageError(f"{message}\nusage: {CELL_USAGE}")


def cell_parser() -> _Parser:
    p = _Parser(prog="%%forge", add_help=False)
    p.add_argument("-s", "--session")
    p.add_argument("--new", action="store_true")
    p.add_argument("-m", "--model")
    p.add_argument("-a", "--agent")
    p.add_argument("--tools", default="")
    p.add_argument("--budget", type=float)
    p.add_argument("--max-tokens", dest="max_tokens", type=int)
    p.add_argument("--async", dest="background", action="store_true")
    # replay (notebook/replay_cell.py): --live asks the model, --replay fails without a recording
    p.add_argument("--live", action="store_true")
    p.add_argument("--replay", action="store_true")
    # Sent by the side panel's prompt box: the panel is the turn's view (docs/api.md).
    p.add_argument("--panel", action="store_true")
    # The images pasted into the panel's box, sent ahead over its comm (panel.py) by their ids.
    p.add_argument("--image", dest="images", action="append", default=[])
    # The prompt to several models side by side, each in a fork (notebook/compare_cell.py).
    p.add_argument("--compare", metavar="MODEL,MODEL")
    return p


def parse_tools(spec: str) -> dict[str, bool]:
    toggles = {}
    for item in filter(None, (s.strip() for s in spec.split(","))):
        name, sep, value = item.partition("=")
        if not sep or value.lower() not in ("true", "false", "on", "off", "1", "0", "yes", "no"):
            raise UsageError(f"--tools takes name=true|false pairs, e.g. --tools python=false,sql=true "
                             f"(got {item!r})")
        toggles[name.strip()] = value.lower() in ("true", "on", "1", "yes")
    return toggles
