"""What a ``python`` call shows: its displays and charts, kept in the call's own card.

Code the model runs displays things the way notebook code does: ``display(x)``, and
``plt.show()`` / ``fig.show()``, which matplotlib's inline backend turns into ``display`` calls.
Published as usual, they would land in the cell being executed — after the turn's record,
below later calls — and the model would never learn that a chart was shown. So while a call
runs, the shell's display publisher and formatter are routed per thread, as ``sys.stdout`` is
in tools/python.py: what the call's own thread displays becomes one of the call's
:class:`Shown` items (shown live in its card, summarised for the model); every other thread
displays as usual.

When the code ends, the figures it left open are shown and closed — what the inline backend's
post-execute flush would do at the end of a cell, but into the call — and a displayable last
expression (a Figure, a value with ``_repr_png_``) is shown unless it already was: each figure
once, however it got shown.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import io
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

IMAGE_MIMES = ("image/png", "image/jpeg", "image/gif", "image/webp", "image/svg+xml")
KEPT_MIMES = (*IMAGE_MIMES, "text/plain")  # what a card can show; the rest stays out of the ops
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
MAX_SHOWN = 20  # a plotting loop must not flood the card and the model's context
TEXT_LIMIT = 20_000

_routes: dict[int, Shown] = {}
_install_lock = threading.Lock()


@dataclass
class Item:
    """One thing the call showed: the bundle the person sees, the line the model reads."""

    bundle: dict[str, str]
    told: str
    image: bool
    mime: str | None = None  # the image's type, when it is one
    label: str | None = None  # "image/png 572×454"

    def image_bytes(self) -> bytes | None:
        """The image as bytes (the bundle holds it base64, an SVG as text); None if damaged."""
        if self.mime is None:
            return None
        value = self.bundle[self.mime]
        if self.mime == "image/svg+xml":
            return value.encode()
        try:
            return base64.b64decode("".join(value.split()), validate=True)
        except (binascii.Error, ValueError):
            return None


class Shown:
    """The displays of one call, in the order it made them."""

    def __init__(self, emit: Callable[[dict[str, str]], None] | None, display_available: bool):
        self.items: list[Item] = []
        self.more = 0  # displays past MAX_SHOWN: counted, not kept
        self._emit = emit
        self._available = display_available
        self._seen: list[Any] = []  # the objects displayed (kept alive: their ids stay unique)

    # -- what the routed shell hands over ------------------------------------------------------

    def saw(self, obj: Any) -> None:
        """The formatter is rendering ``obj`` for this call (plt.show, display, a flush)."""
        if not self.was_shown(obj):
            self._seen.append(obj)

    def was_shown(self, obj: Any) -> bool:
        return any(o is obj for o in self._seen)

    def published(self, data: dict[str, Any], update: bool) -> None:
        # update_display changes an earlier display in place (a progress line): the card keeps
        # the first, rather than one more per step
        if not update:
            self.add(data)

    # -- the call's own end ------------------------------------------------------------------

    def show(self, obj: Any) -> bool:
        """Show ``obj`` (a figure, an image value) as this call's; False if it has no image."""
        self.saw(obj)
        data = _bundle(obj)
        if data is None:
            return False
        self.add(data)
        return True

    def add(self, data: dict[str, Any]) -> None:
        if len(self.items) >= MAX_SHOWN:
            self.more += 1
            return
        item = self._item(data)
        self.items.append(item)
        if self._emit is not None:
            self._emit(item.bundle)

    def images(self) -> list[tuple[str, bytes, str]]:
        """(mime, bytes, label) of each image shown, in order (what the model may be sent)."""
        found = []
        for item in self.items:
            data = item.image_bytes()
            if data is not None and item.mime is not None:
                found.append((item.mime, data, item.label or item.mime))
        return found

    def told(self) -> list[str]:
        """The lines the model reads, one per display."""
        lines = [i.told for i in self.items]
        if self.more:
            lines.append(f"[{self.more} more displays not shown: at most {MAX_SHOWN} a call]")
        return lines

    def _item(self, data: dict[str, Any]) -> Item:
        bundle = {m: bundle_value(m, data[m]) for m in KEPT_MIMES if data.get(m) is not None}
        mime = next((m for m in IMAGE_MIMES if m in bundle), None)
        if mime is None:
            text = bundle.get("text/plain", "")
            if len(text) > TEXT_LIMIT:
                text = text[:TEXT_LIMIT] + f"\n… (display cut at {TEXT_LIMIT:,} characters)"
            return Item(bundle, text or f"[{', '.join(data) or 'an empty display'}]", False)
        label = mime
        if mime == "image/png" and (size := _png_size(bundle[mime])) is not None:
            label = f"image/png {size[0]}×{size[1]}"
        bundle["text/plain"] = label  # the image's alt text, in the card and the record
        where = ", shown to the user" if self._available else " (no display here to show it)"
        return Item(bundle, f"[{label}{where}]", True, mime, label)


@contextlib.contextmanager
def capturing(shown: Shown) -> Iterator[None]:
    """Route what the current thread displays into ``shown`` while the block runs."""
    ident = threading.get_ident()
    _routes[ident] = shown
    try:
        yield
    finally:
        _routes.pop(ident, None)


def install() -> None:
    """Route the shell's display publisher and formatter per thread (once; no shell: nothing)."""
    shell = _shell()
    if shell is None:
        return
    with _install_lock:
        pub, fmt = shell.display_pub, shell.display_formatter
        if not getattr(pub, "_forge_routed", False):
            publish, clear = pub.publish, pub.clear_output

            def routed_publish(data: Any, metadata: Any = None, *args: Any,
                               transient: Any = None, update: bool = False, **kw: Any) -> Any:
                shown = _routes.get(threading.get_ident())
                # a live widget needs the cell's output area: a card cannot host it
                if shown is None or not isinstance(data, dict) or WIDGET_MIME in data:
                    extra = {"transient": transient} if transient else {}
                    return publish(data, metadata, *args, update=update, **extra, **kw)
                shown.published(data, update)
                return None

            def routed_clear(wait: bool = False) -> Any:
                if threading.get_ident() in _routes:
                    return None  # it would clear the person's cell, the live turn with it
                return clear(wait)

            pub.publish, pub.clear_output = routed_publish, routed_clear
            pub._forge_routed = True
        if not getattr(fmt, "_forge_routed", False):
            original = fmt.format

            def routed_format(obj: Any, *args: Any, **kw: Any) -> Any:
                shown = _routes.get(threading.get_ident())
                if shown is not None:
                    shown.saw(obj)
                return original(obj, *args, **kw)

            fmt.format = routed_format
            fmt._forge_routed = True


def open_figures() -> list[Any]:
    """The matplotlib figures open now (none while pyplot was never imported)."""
    if "matplotlib.pyplot" not in sys.modules:
        return []
    from matplotlib._pylab_helpers import Gcf

    return [m.canvas.figure for m in Gcf.get_all_fig_managers()]


def finish(shown: Shown, before: list[Any], value: Any, has_value: bool) -> bool:
    """Show the figures the call opened and left open, then close them (as the inline backend
    does at the end of a cell, so its own flush finds nothing left to show under the cell);
    then the last expression's value, if it is displayable and was not shown. True when the
    value was taken as a display (the model is then not given its repr)."""
    new = [f for f in open_figures() if not any(f is b for b in before)]
    for fig in new:
        if not shown.was_shown(fig):
            shown.show(fig)
    if new:
        import matplotlib.pyplot as plt

        for fig in new:
            plt.close(fig)
    if not has_value or not displayable(value):
        return False
    return shown.was_shown(value) or shown.show(value)


def displayable(value: Any) -> bool:
    fig_cls = getattr(sys.modules.get("matplotlib.figure"), "Figure", None)
    return (fig_cls is not None and isinstance(value, fig_cls)) or any(
        callable(getattr(value, name, None)) for name in ("_repr_png_", "_repr_jpeg_"))


def _shell() -> Any:
    """The running IPython shell, if any, without importing IPython where it is not loaded."""
    mod = sys.modules.get("IPython.core.interactiveshell")
    if mod is None or not mod.InteractiveShell.initialized():
        return None
    return mod.InteractiveShell.instance()


def _bundle(obj: Any) -> dict[str, Any] | None:
    """``obj`` as a MIME bundle with an image: the shell's formatter first (the person's own
    figure settings: retina, svg), else a PNG matplotlib or ``_repr_png_`` makes."""
    shell = _shell()
    if shell is not None:
        with contextlib.suppress(Exception):
            data, _ = shell.display_formatter.format(obj)
            if any(m in data for m in IMAGE_MIMES):
                return data
    found = _image(obj)
    if found is None:
        return None
    mime, data = found
    return {mime: data, "text/plain": mime}


def _image(obj: Any) -> tuple[str, bytes] | None:
    """(mime, bytes) of a figure (a PNG) or of a value's ``_repr_png_`` / ``_repr_jpeg_``."""
    fig_cls = getattr(sys.modules.get("matplotlib.figure"), "Figure", None)
    if fig_cls is not None and isinstance(obj, fig_cls):
        buf = io.BytesIO()
        obj.savefig(buf, format="png", bbox_inches="tight")
        return "image/png", buf.getvalue()
    for name, mime in (("_repr_png_", "image/png"), ("_repr_jpeg_", "image/jpeg")):
        method = getattr(obj, name, None)
        if callable(method):
            try:
                data = method()
            except Exception:
                continue
            if isinstance(data, bytes):
                return mime, data
    return None


def bundle_value(mime: str, value: Any) -> str:
    """A bundle's value as the ops carry it: binary images base64 (as Jupyter's wire does)."""
    if isinstance(value, bytes):
        if mime in ("image/svg+xml", "text/plain"):
            return value.decode(errors="replace")
        return base64.b64encode(value).decode()
    return value if isinstance(value, str) else str(value)


def _png_size(b64: str) -> tuple[int, int] | None:
    try:
        head = base64.b64decode("".join(b64.split())[:32])  # the signature and the IHDR size
    except (binascii.Error, ValueError):
        return None
    if head[:8] == b"\x89PNG\r\n\x1a\n" and len(head) >= 24:
        return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
    return None
