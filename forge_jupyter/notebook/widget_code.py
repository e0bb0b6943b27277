"""The cell widget's code: a small bootstrap in the widget's state, the renderer on request.

A notebook saved with widget state keeps each widget's ``_esm``. So ``TurnWidget._esm`` is
``static/widget_boot.js`` (under 2 KB), not the ~90 KB renderer: in JupyterLab with this
package's labextension the renderer is already on the page (the extension puts it on
``globalThis[Symbol.for("forge-jupyter.render")]``); elsewhere (VS Code, Colab, a Lab without
the extension) the bootstrap sends ``{type: "code"}`` and the kernel answers with
:func:`code_message`, a custom message, which no widget state ever stores.

``static/widget.js`` and ``widget.css`` are built from ``labextension/src/render/`` (the same
sources as the labextension) by ``npm run build`` there, which every ``pip install`` of a
source tree runs.
"""

from __future__ import annotations

import threading
from pathlib import Path

STATIC = Path(__file__).resolve().parent.parent / "static"
BOOT = STATIC / "widget_boot.js"

_lock = threading.Lock()
_code: dict[str, str] | None = None


def boot_esm() -> str:
    """The bootstrap as the widget's state keeps it, once per saved cell: without its comment
    lines and indentation (the file stays readable; ~30% fewer bytes per cell)."""
    lines = (line.strip() for line in BOOT.read_text(encoding="utf-8").splitlines())
    return "\n".join(line for line in lines if line and not line.startswith("//"))


def code_message() -> dict[str, str]:
    """``{kind: "code", esm, css}``: the standalone renderer, read once a process; or
    ``{kind: "code", error}`` saying what to do when this install has no built front end."""
    global _code
    with _lock:
        if _code is None:
            try:
                _code = {"kind": "code",
                         "esm": (STATIC / "widget.js").read_text(encoding="utf-8"),
                         "css": (STATIC / "widget.css").read_text(encoding="utf-8")}
            except OSError as exc:  # not cached: a build may come meanwhile
                return {"kind": "code", "error": (
                    f"{exc.filename} is missing: this forge-jupyter was installed without its "
                    "front end. Reinstall it with pip (which builds it), or run `npm run build` "
                    "in labextension/, then rerun the cell.")}
        return _code
