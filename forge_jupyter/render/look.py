"""How the static record looks: the live widget's class names, and the same looks inline.

The record is the live view's last frame: its elements carry the widget's classes
(labextension/src/render/widget.css styles them where the extension is installed, so nothing
moves when a turn ends) and, for GitHub, nbviewer and VS Code where that CSS is absent, the
same declarations inline. Inline values name JupyterLab's theme variables with the light
theme's colours as fallbacks, so they follow the theme where there is one.

``STYLES`` is the one table of those declarations; ``element`` builds a tag from it. The
sanitizer (markdown.py) lets through exactly these classes, and style properties only on the
record's own elements — model text never carries either.
"""

from __future__ import annotations

from html import escape

_BORDER = "var(--jp-border-color2, #e0e0e0)"
_MUTED = "var(--jp-ui-font-color2, #616161)"
_FAINT = "var(--jp-ui-font-color3, #9e9e9e)"
_SMALL = "var(--jp-ui-font-size0, 11px)"
_MONO = "var(--jp-code-font-family, ui-monospace, SFMono-Regular, Menlo, monospace)"
_BG2 = "var(--jp-layout-color2, #f5f5f5)"

# A tool's state → the colour of its card's left edge and of its state chip (widget.css).
STATE_COLOURS = {
    "running": "var(--jp-brand-color1, #1976d2)",
    "completed": "var(--jp-success-color1, #388e3c)",
    "error": "var(--jp-error-color1, #d32f2f)",
    "denied": "var(--jp-warn-color1, #f57c00)",
}

STYLES: dict[str, str] = {
    "forge-turn": "line-height:1.45;font-size:var(--jp-ui-font-size1, 13px);padding:2px 0 4px",
    "forge-header": f"display:flex;align-items:center;gap:10px;min-height:24px;color:{_MUTED};"
                    f"font-size:{_SMALL}",
    "forge-text": "overflow-wrap:anywhere",
    "forge-md": "",
    # margins in widget.css only: the record's last footer drops its own there (the seam)
    "forge-step": f"font-size:{_SMALL};color:{_FAINT}",
    "forge-tool": f"border:1px solid {_BORDER};border-left:3px solid {_FAINT};border-radius:4px;"
                  "padding:4px 8px;margin:6px 0",
    "forge-tool-head": "display:flex;align-items:baseline;gap:8px;min-width:0",
    "forge-tool-icon": "",
    "forge-sep": "display:none",
    "forge-tool-name": f"font-family:{_MONO};font-weight:600",
    "forge-tool-title": f"flex:1;min-width:0;color:{_MUTED};overflow:hidden;"
                        "text-overflow:ellipsis;white-space:nowrap",
    "forge-tool-state": f"font-size:{_SMALL};color:{_MUTED};white-space:nowrap;padding:0 6px;"
                        f"border-radius:8px;background-color:{_BG2}",
    "forge-duration": f"font-size:{_SMALL};color:{_MUTED};white-space:nowrap",
    "forge-tool-args": "",
    "forge-tool-output": "",
    "forge-tool-error": "color:var(--jp-error-color1, #d32f2f)",
    "forge-tool-denied": "margin-top:4px",
    "forge-decision": f"font-size:{_SMALL};color:{_MUTED}",
    "forge-arg": f"display:flex;gap:8px;align-items:baseline;font-size:{_SMALL}",
    "forge-arg-key": f"color:{_MUTED};font-family:{_MONO}",
    "forge-displays": "",
    "forge-reasoning": f"margin:4px 0;color:{_MUTED}",
    "forge-summary-text": f"margin:4px 0;color:{_MUTED}",
    "forge-retry": f"font-size:{_SMALL};color:{_MUTED};margin:4px 0;"
                   "border-left:3px solid var(--jp-warn-color1, #f57c00);padding-left:8px",
    "forge-compaction": f"font-size:{_SMALL};color:{_MUTED};margin:4px 0;text-align:center",
    "forge-patch": "",
    "forge-subtask": f"font-size:{_SMALL};color:{_MUTED};margin:4px 0",
    "forge-file": f"font-size:{_SMALL};color:{_MUTED};margin:4px 0",
    "forge-agent-ref": f"font-size:{_SMALL};color:{_MUTED};margin:4px 0",
    "forge-label": f"font-weight:600;color:{_MUTED}",
    "forge-message-error": "margin:4px 0;padding:4px 8px;border-radius:4px;"
                           "color:var(--jp-error-color1, #d32f2f)",
    "forge-aborted": f"color:{_MUTED};background-color:{_BG2}",
    "forge-sources": f"font-size:0.85em;color:{_MUTED};margin:2px 0 6px;overflow-wrap:anywhere",
    "forge-note": f"font-size:{_SMALL};color:{_MUTED}",
    "forge-summary-line": "",
    "forge-synthetic": f"color:{_MUTED};font-style:italic",
    "forge-reasoning-body": f"border-left:2px solid {_BORDER};padding-left:10px;margin-left:3px",
}
# The seam between the record and the cell's value below it: in the live view the answer's
# first margin collapsed into the step footer's; two outputs cannot collapse margins, so the
# record ends without space and the value begins without any (its first block's own margin
# is the gap), and the answer stays where it was when the widget gives way.
SEAM_BOTTOM = "padding-bottom:0;margin-bottom:0"
SEAM_TOP = "padding-top:0;margin-top:0"
CLASSES = frozenset(STYLES) | {"forge-record", "forge-value", "forge-body"}
# Every property STYLES uses (and STATE_COLOURS adds): what the sanitizer keeps in a style.
PROPERTIES = frozenset(
    decl.split(":", 1)[0] for style in STYLES.values() for decl in style.split(";") if decl
) | {"border-left-color", "padding-bottom", "padding-top", "margin-bottom"}
TAGS_WITH_CLASSES = ("div", "span", "details", "strong", "pre")


def element(tag: str, classes: str, body: str, *, style: str = "", **attrs: str) -> str:
    """``<tag class=… style=…>body</tag>``: the classes' looks inline (then ``style``), and
    ``attrs`` (``data_state`` → ``data-state``) escaped. ``body`` is HTML."""
    names = classes.split()
    inline = ";".join(filter(None, [*(STYLES.get(n, "") for n in names), style]))
    parts = [f'class="{escape(classes)}"']
    if inline:
        parts.append(f'style="{escape(inline)}"')
    parts += [f'{k.replace("_", "-")}="{escape(v)}"' for k, v in attrs.items()]
    return f"<{tag} {' '.join(parts)}>{body}</{tag}>"


def state_style(state: str) -> tuple[str, str]:
    """(the card's extra style, the chip's) for a tool state."""
    colour = STATE_COLOURS.get(state)
    if colour is None:
        return "", ""
    return f"border-left-color:{colour}", f"color:{colour}"
