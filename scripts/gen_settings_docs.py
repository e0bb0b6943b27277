"""Write docs/settings.md from the one declaration of forge-jupyter's settings.

    python scripts/gen_settings_docs.py            # rewrites docs/settings.md
    python scripts/gen_settings_docs.py --out F    # writes F instead (the docs test compares)

Every row comes from the one declaration of the settings, ``forge_jupyter.settings.SETTINGS``
(from which the traitlets class and the Python API's defaults are derived too), so the page
cannot drift from the code.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from forge_jupyter.settings import SETTINGS, Setting

ROOT = Path(__file__).resolve().parents[1]

HEADER = """# Settings reference

Generated from `forge_jupyter/settings.py` by `python scripts/gen_settings_docs.py`; do not edit
by hand. Every setting is a trait of the `Forge` configurable (`%config Forge.NAME = …`,
`c.Forge.NAME = …` in `ipython_config.py`), an argument of `forge_jupyter.Forge(...)` (but
those marked notebook only), and reads the `FORGE_*` variable named here, in a kernel and in a
script alike. An explicit argument wins over config, config over the environment, the
environment over the default; `%forge config` shows each value and
where it came from. A list setting takes comma-separated values in its variable; a dict setting
takes JSON.

| setting | variable | type | default | meaning |
|---|---|---|---|---|
"""


KINDS = {"str": "str", "int": "int", "float": "float", "bool": "bool", "list": "list",
         "dict": "dict", "duration": "str or number"}


def kind(s: Setting) -> str:
    if s.kind == "enum":
        return " \\| ".join(f"`{v}`" for v in s.choices)
    return KINDS[s.kind]


def default(s: Setting) -> str:
    value = s.default
    if value is None or value == "" or value == [] or value == {}:
        return "—"
    if isinstance(value, bool):
        return str(value).lower()
    return f"`{value}`"


def page() -> str:
    rows = []
    for s in SETTINGS:
        help_text = " ".join(s.help.split()).replace("|", "\\|")
        where = "" if s.scope == "forge" else " (notebook only)"
        rows.append(f"| `{s.name}` | `{s.env}` | {kind(s)} | {default(s)} | {help_text}{where} |\n")
    return HEADER + "".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "settings.md")
    args = parser.parse_args()
    args.out.write_text(page())


if __name__ == "__main__":
    main()
