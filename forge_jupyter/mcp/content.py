"""An MCP tool result → what the model reads, and files beside it.

Text blocks become the output (the global truncation and scrubbing then apply, run_call). An
image, audio or an embedded resource is saved as a file in the session's output folder under
``mcp/`` — named after the call's part id, never after anything the server said, with an
extension from a short list of known types — and recorded as a file part of the message; the
output says where it is (``read`` can open it: the output folder is readable). A resource's
text is also shown inline. A resource link is only named: nothing is fetched.

The server's data is untrusted: base64 that does not decode, a MIME type that is not one, or a
file over ``MAX_FILE`` is refused in the output, not written.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..scrub import valid_text
from ..tools.truncate import format_bytes

MAX_FILE = 20 * 1024 * 1024  # decoded bytes of one image, audio clip or resource
_MIME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.+-]{0,63}/[A-Za-z0-9][A-Za-z0-9.+-]{0,63}$")
EXTENSIONS = {
    "image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp",
    "audio/wav": ".wav", "audio/x-wav": ".wav", "audio/mpeg": ".mp3", "audio/ogg": ".ogg",
    "text/plain": ".txt", "text/csv": ".csv", "text/markdown": ".md", "application/json": ".json",
    "application/pdf": ".pdf", "text/html": ".html.txt", "image/svg+xml": ".svg.txt",
}
SHOWN = ("image/png", "image/jpeg", "image/gif")  # displayed to the person in the notebook


@dataclass
class Saved:
    path: str
    mime: str
    size: int
    kind: str  # image | audio | resource


@dataclass
class Converted:
    text: str
    files: list[Saved] = field(default_factory=list)
    images: list[tuple[str, str]] = field(default_factory=list)  # (mime, base64) to display


def clean_mime(raw: Any, default: str = "application/octet-stream") -> str:
    mime = str(raw or "").strip().lower()
    return mime if _MIME.fullmatch(mime) else default


def convert(result: Any, *, folder: str | None, stem: str,
            scrub: Callable[[str], str | None] = lambda s: s) -> Converted:
    """The model's text and the saved files of one CallToolResult. ``scrub`` hides secrets in
    a text resource before it is saved (the text the model reads is scrubbed by run_call)."""
    out = Converted("")
    pieces: list[str] = []
    for i, block in enumerate(result.content or []):
        kind = getattr(block, "type", None)
        if kind == "text":
            pieces.append(valid_text(block.text))
        elif kind in ("image", "audio"):
            pieces.append(_save_data(out, block.data, clean_mime(block.mime_type), kind,
                                     folder, f"{stem}-{i}"))
        elif kind == "resource":
            res = block.resource
            uri = valid_text(str(res.uri))[:300]
            mime = clean_mime(res.mime_type, "text/plain" if hasattr(res, "text") else
                              "application/octet-stream")
            if hasattr(res, "text"):
                data = scrub(valid_text(res.text)) or ""
                note = _save_bytes(out, data.encode(), mime, "resource", folder, f"{stem}-{i}")
                pieces.append(f"[resource {uri} ({mime}){note}]\n{data}")
            else:
                pieces.append(f"[resource {uri}] " + _save_data(out, res.blob, mime, "resource",
                                                               folder, f"{stem}-{i}"))
        elif kind == "resource_link":
            name = valid_text(str(getattr(block, "name", "") or ""))[:200]
            pieces.append(f"[resource link: {valid_text(str(block.uri))[:300]} {name}".rstrip()
                          + "]")
        else:
            pieces.append(f"[a {str(kind)[:40]} block this client does not read]")
    if not pieces and getattr(result, "structured_content", None) is not None:
        pieces.append(json.dumps(result.structured_content, ensure_ascii=False, default=str))
    out.text = "\n".join(pieces)
    return out


def _save_data(out: Converted, data: str, mime: str, kind: str, folder: str | None,
               stem: str) -> str:
    """Decode base64 ``data`` and save it; the line the model reads about it."""
    if len(data) > MAX_FILE * 4 // 3 + 4:
        return f"[{kind} ({mime}) of about {format_bytes(len(data) * 3 // 4)} not saved: over " \
               f"the {format_bytes(MAX_FILE)} limit]"
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return f"[{kind} ({mime}) not saved: its data is not valid base64]"
    line = f"[{kind} {mime}, {format_bytes(len(raw))}"
    note = _save_bytes(out, raw, mime, kind, folder, stem)
    if kind == "image" and mime in SHOWN:
        out.images.append((mime, base64.b64encode(raw).decode()))
    return line + note + "]"


def _save_bytes(out: Converted, raw: bytes, mime: str, kind: str, folder: str | None,
                stem: str) -> str:
    if folder is None:
        return "; not saved: this session has no output folder"
    if len(raw) > MAX_FILE:
        return f"; not saved: over the {format_bytes(MAX_FILE)} limit"
    target = Path(folder) / f"{stem}{EXTENSIONS.get(mime, '.bin')}"
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target, "xb") as fh:  # x: never over an existing file (or a link planted there)
        fh.write(raw)
    out.files.append(Saved(str(target), mime, len(raw), kind))
    return f", saved as {target}"
