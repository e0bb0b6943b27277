"""What a saved notebook shows of a turn that had not ended when it was saved.

JupyterLab autosaves every two minutes, so a notebook can be saved while a ``%%forge`` cell is
still running (or waiting for an approval). The file then holds the live widget's output, and
reopened without that kernel the widget's model is gone: JupyterLab's widget renderer does not
fall back to another MIME type, it prints "Error displaying widget: model not found".

So each live widget is followed by a second output, this note. Its own style rules (trusted
HTML, kept in the file) hide it while the widget before it renders — live, or still loading —
and, where that widget failed to render, hide the widget's error and show the note instead.
When the turn ends, the widget's output becomes the turn's record and this note becomes an
empty output, so a notebook saved afterwards holds only the record. Frontends without these
selectors (an untrusted notebook, nbconvert) show the note as plain text.
"""

from __future__ import annotations

from typing import Any

NOTE = ("This %%forge turn was still running when the notebook was saved (its kernel may have "
        "stopped it since), so its record is not in this file. Everything it did is in the "
        "store: run %load_ext forge_jupyter, then %forge history to see it.")

# The widget renderer (ipywidgets' WidgetRenderer, a Lumino Panel — JupyterLab's own MIME
# renderers are not) gains the class jupyter-widgets only when it gives up ("model not found");
# live, the view's element is inside it instead. (No :has() inside :has(): browsers refuse it.)
_W = ".jp-OutputArea-output.lm-Panel"
STYLE = (
    f".jp-OutputArea-child:has(> {_W}:not(.jupyter-widgets))"
    " + .jp-OutputArea-child:has(.forge-saved-note),"
    f".jp-OutputArea-child:has(> {_W}.jupyter-widgets)"
    ":has(+ .jp-OutputArea-child .forge-saved-note){display:none}"
    ".forge-saved-note{padding:4px 8px;border-left:3px solid #d9a400;"
    "font-size:var(--jp-content-font-size1,13px)}"
)


def note_bundle() -> dict[str, Any]:
    """The display bundle of the note that follows a live widget."""
    html = (f"<style>{STYLE}</style><div class=\"forge-saved-note\">This <code>%%forge</code> "
            "turn was still running when the notebook was saved (its kernel may have stopped it "
            "since), so its record is not in this file. Everything it did is in the store: run "
            "<code>%load_ext forge_jupyter</code>, then <code>%forge history</code> to see it."
            "</div>")
    return {"text/html": html, "text/plain": NOTE}


EMPTY: dict[str, Any] = {}  # what the note becomes when the turn ends: an output that shows nothing
