"""Write docs/settings.md from the one declaration of forge-jupyter's settings.

    python scripts/gen_settings_docs.py            # rewrites docs/settings.md
    python scripts/gen_settings_docs.py --out F    # writes F instead (the docs test compares)

Every row comes from the traitlets class ``forge_jupyter.config.Forge`` (type, default, help)
and its ``ENV`` table (the variable), so the page cannot drift from the code.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from traitlets import Bool, CaselessStrEnum, Dict, Float, Int, List, TraitType, Unicode, Union

from forge_jupyter.config import ENV, Forge

ROOT = Path(__file__).resolve().parents[1]

HEADER = """# Settings reference

Generated from `forge_jupyter/config.py` by `python scripts/gen_settings_docs.py`; do not edit
by hand. Every setting is a trait of the `Forge` configurable (`%config Forge.NAME = …`,
`c.Forge.NAME = …` in `ipython_config.py`) and reads the `FORGE_*` variable named here. Config
wins over the environment, which wins over the default; `%forge config` shows each value and
where it came from. A list setting takes comma-separated values in its variable; a dict setting
takes JSON.

| setting | variable | type | default | meaning |
|---|---|---|---|---|
"""


def kind(trait: TraitType) -> str:
    if isinstance(trait, CaselessStrEnum):
        return " \\| ".join(f"`{v}`" for v in trait.values)
    for cls, name in ((Bool, "bool"), (Int, "int"), (Float, "float"), (List, "list"),
                      (Dict, "dict"), (Unicode, "str"), (Union, "str or number")):
        if isinstance(trait, cls):
            return name
    return type(trait).__name__


def default(trait: TraitType) -> str:
    value = trait.default()
    if value is None or value == "" or value == [] or value == {}:
        return "—"
    if isinstance(value, bool):
        return str(value).lower()
    return f"`{value}`"


def page() -> str:
    traits = Forge.class_traits(config=True)
    rows = []
    for name, var in ENV.items():
        trait = traits[name]
        help_text = " ".join((trait.help or "").split()).replace("|", "\\|")
        rows.append(f"| `{name}` | `{var}` | {kind(trait)} | {default(trait)} | {help_text} |\n")
    return HEADER + "".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "settings.md")
    args = parser.parse_args()
    args.out.write_text(page())


if __name__ == "__main__":
    main()
