"""One output of a cell (nbformat's JSON: a saved ``.ipynb``'s or the live page's) as text a
model can read, within ``budget.OUTPUT_CHARS``.

Outputs are untrusted: HTML is cut before it is parsed and turned into text with the standard
library's parser (scripts and styles dropped, nothing rendered or run), base64 images inside it
become a note, a DataFrame is read as its ``text/plain`` form, a Plotly figure is described
rather than dumped, binary data is named with its size, ANSI colours are stripped, and secrets
are scrubbed before anything is cut (so no half of one survives a cut). Images are noted with
their type and size; ``image_bytes`` hands their bytes to whoever shows them to a vision model.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...scrub import valid_text
from ...tools.html_text import html_to_text
from .budget import HTML_PARSE_CHARS, OUTPUT_CHARS, cut

Scrub = Callable[[str], str]
ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
# a data: URI inside HTML or text: its payload never reaches the model
DATA_URI = re.compile(r"data:([\w.+-]+/[\w.+-]+)?(?:;[\w=.-]+)*;base64,[A-Za-z0-9+/=\s]{64,}")
IMAGE_MIMES = ("image/png", "image/jpeg", "image/gif", "image/webp", "image/svg+xml")
PLOTLY = "application/vnd.plotly.v1+json"
# text forms, best first; text/plain before HTML so a DataFrame reads as its text table
TEXT_MIMES = ("text/plain", "text/markdown", "text/latex", "text/html", "application/json")
BARE_REPR = re.compile(r"^<[\w.]+ (object|at 0x[0-9a-f]+)[^>]*>$")


@dataclass(frozen=True)
class ImageRef:
    """An image in an output: where it is and what it is, not its bytes."""

    mime: str
    size: int  # bytes, decoded
    width: int | None = None
    height: int | None = None

    def describe(self) -> str:
        dims = f" {self.width}×{self.height}" if self.width and self.height else ""
        return f"[{self.mime}{dims}, {_human(self.size)}]"


@dataclass(frozen=True)
class OutputSummary:
    """What the model reads of one output, the images it holds, and the bounds that applied."""

    kind: str  # stream, execute_result, display_data, error
    text: str
    images: list[ImageRef] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    error: str | None = None  # "ename: evalue" of an error output


def _human(n: int) -> str:
    return f"{n:,} bytes" if n < 10_240 else f"{n / 1024:,.0f} KB"


def joined(value: Any) -> str:
    """nbformat's multiline string: a str or a list of str (anything else: its JSON)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "".join(value)
    try:
        return json.dumps(value, default=str)
    except (TypeError, ValueError):
        return repr(value)


def _b64_size(data: str) -> int:
    return len(re.sub(r"\s", "", data)) * 3 // 4


def _data_uri_note(m: re.Match[str]) -> str:
    return f"[inline {m.group(1) or 'data'}, {_human(_b64_size(m.group(0).split(',', 1)[1]))}]"


def clean(text: str, scrub: Scrub) -> str:
    """Valid Unicode, no ANSI escapes, no data: payloads, no secrets."""
    text = ANSI.sub("", valid_text(text)).replace("\r\n", "\n")
    text = DATA_URI.sub(_data_uri_note, text)
    return scrub(text)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def images(output: dict[str, Any]) -> list[ImageRef]:
    """The images a display output holds (one per image MIME type)."""
    data = output.get("data")
    if not isinstance(data, dict):
        return []
    meta = output.get("metadata") if isinstance(output.get("metadata"), dict) else {}
    out = []
    for mime in IMAGE_MIMES:
        if mime in data:
            raw = joined(data[mime])
            dims = meta.get(mime) if isinstance(meta.get(mime), dict) else {}
            size = len(raw.encode()) if mime == "image/svg+xml" else _b64_size(raw)
            out.append(ImageRef(mime, size, _int(dims.get("width")), _int(dims.get("height"))))
    return out


def image_bytes(output: dict[str, Any], mime: str, limit: int = 20 * 1024 * 1024) -> bytes | None:
    """The decoded bytes of ``output``'s image of type ``mime`` (None when it has none, it is
    larger than ``limit`` bytes or not valid base64): for showing it to a vision model."""
    data = output.get("data")
    if not isinstance(data, dict) or mime not in data:
        return None
    value = data[mime]
    if not (isinstance(value, str) or isinstance(value, list)
            and all(isinstance(v, str) for v in value)):
        return None  # not text: joined() would make JSON of it, and "null" is valid base64
    raw = joined(value)
    if mime == "image/svg+xml":
        blob = raw.encode()
        return blob if len(blob) <= limit else None
    if _b64_size(raw) > limit:
        return None
    try:
        return base64.b64decode(re.sub(r"\s", "", raw), validate=True)
    except (binascii.Error, ValueError):
        return None


def _plotly(value: Any) -> str:
    fig = value if isinstance(value, dict) else {}
    traces = fig.get("data") if isinstance(fig.get("data"), list) else []
    kinds = sorted({str(t.get("type", "scatter")) for t in traces if isinstance(t, dict)})
    layout = fig.get("layout") if isinstance(fig.get("layout"), dict) else {}
    title = layout.get("title")
    if isinstance(title, dict):
        title = title.get("text")
    named = f', title "{str(title)[:200]}"' if title else ""
    size = len(joined(value))
    return (f"[Plotly figure: {len(traces)} trace(s) ({', '.join(kinds)[:200] or 'none'}){named}; "
            f"its JSON ({size:,} characters) is not shown]")


def _html(raw: str) -> tuple[str, list[str]]:
    notes = []
    raw = DATA_URI.sub(_data_uri_note, raw)
    if len(raw) > HTML_PARSE_CHARS:
        notes.append(f"[HTML cut at {HTML_PARSE_CHARS:,} of {len(raw):,} characters before it "
                     "was read]")
        raw = raw[:HTML_PARSE_CHARS]
    _title, text = html_to_text(raw)
    return text, ["[HTML output read as text; scripts and styles dropped]", *notes]


def _display(data: dict[str, Any]) -> tuple[str, list[str]]:
    """The text of a MIME bundle and the notes on how it was read."""
    if PLOTLY in data:
        return _plotly(data[PLOTLY]), []
    plain = joined(data["text/plain"]) if "text/plain" in data else None
    for mime in TEXT_MIMES:
        if mime not in data:
            continue
        if mime == "text/plain" and BARE_REPR.match(plain or "") and "text/html" in data:
            continue  # <IPython.core.display.HTML object>: the HTML says more
        raw = joined(data[mime])
        if mime == "text/html":
            return _html(raw)
        return raw, []
    others = [m for m in data if m not in IMAGE_MIMES]
    if others:
        return " ".join(f"[{m}, {len(joined(data[m])):,} characters, not shown]"
                        for m in others[:5]), []
    return "", []


def summarize(output: Any, scrub: Scrub, limit: int = OUTPUT_CHARS) -> OutputSummary:
    """``output`` (one nbformat output) as bounded, scrubbed text for a model."""
    if not isinstance(output, dict):
        return OutputSummary("unknown", "[an output forge cannot read]")
    kind = str(output.get("output_type", "unknown"))
    notes: list[str] = []
    found: list[ImageRef] = []
    error = None
    if kind == "stream":
        text = joined(output.get("text", ""))
    elif kind == "error":
        ename, evalue = str(output.get("ename", "Error")), joined(output.get("evalue", ""))
        trace = output.get("traceback")
        lines = [joined(t) for t in trace] if isinstance(trace, list) else []
        text = "\n".join(lines) or f"{ename}: {evalue}"
        error = clean(f"{ename}: {evalue}", scrub)[:500]
    elif kind in ("execute_result", "display_data", "update_display_data"):
        data = output.get("data") if isinstance(output.get("data"), dict) else {}
        found = images(output)
        text, notes = _display(data)
        if found:
            text = " ".join([*(i.describe() for i in found), text]).strip()
    else:
        text = f"[an output of type {kind[:40]!r}, not read]"
    # cleaned (scrubbed) before the cut, but never more than a few times the bound: a 10 MB
    # output costs what its first part costs; a traceback keeps its end, where the error is
    window = limit * 4 + 1_000
    text = text[-window:] if kind == "error" else text[:window]
    shown = cut(clean(text, scrub), limit, "output", tail=kind == "error")
    if shown.note:
        notes.append(shown.note)
    return OutputSummary(kind, shown.text, found, notes, error)
