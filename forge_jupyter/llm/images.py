"""Images for a model: bytes and a MIME type in, an image the model may be sent — or why not.

Whatever shows an image to the model goes through ``fit``: the ``python`` tool's charts now, a
notebook output's image later. The bytes are untrusted (code the model wrote made them, or a
notebook from anywhere), so every bound holds before anything is decoded: at most
``SOURCE_MAX_BYTES`` of input, at most ``SOURCE_MAX_PIXELS`` as the header states them (a
20000×20000 PNG header is refused without inflating a pixel), raster formats only (an SVG is
text, never drawn here), and a file Pillow cannot decode is refused, not half-sent. What passes
is scaled to ``ImageLimits.max_side`` and re-encoded until it fits ``max_bytes`` (PNG, then
JPEG at falling quality, then smaller); an image already within both is sent as it came.

``supports_vision`` is litellm's word on a model (its bundled, offline model table);
``content_part`` is the OpenAI-style ``image_url`` content part litellm turns into each
provider's own form.
"""

from __future__ import annotations

import base64
import io
import warnings
from dataclasses import dataclass
from typing import Any

from ..settings import BY_NAME

SOURCE_MAX_BYTES = 20_000_000  # larger input is refused before it is opened
SOURCE_MAX_PIXELS = 50_000_000  # the header's width × height; larger is a decompression bomb
# What the model may be sent: the raster types every vision provider takes.
SENT_MIMES = ("image/png", "image/jpeg")
# What is decoded (and re-encoded as one of SENT_MIMES); anything else is refused unread.
DECODED = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}
JPEG_QUALITIES = (85, 70, 55, 40)
MIN_SIDE = 64  # shrinking to fit max_bytes stops here


@dataclass(frozen=True)
class ImageLimits:
    """The bounds on what the model is sent (settings.py declares them)."""

    max_side: int = BY_NAME["image_max_side"].default  # pixels, the longer side
    max_bytes: int = BY_NAME["image_max_bytes"].default  # of one image, encoded
    per_step: int = BY_NAME["images_per_step"].default  # from one model round's tool calls
    per_request: int = BY_NAME["images_per_request"].default  # in one request, the newest


@dataclass(frozen=True)
class FittedImage:
    """An image within the limits, ready to send (and to keep)."""

    data: bytes
    mime: str  # one of SENT_MIMES
    width: int
    height: int
    source: tuple[int, int]  # its size as it came

    @property
    def label(self) -> str:
        """"image/png 572×454", and "(from 4000×3000)" when it was scaled down."""
        w, h = self.source
        scaled = f" (from {w}×{h})" if (w, h) != (self.width, self.height) else ""
        return f"{self.mime} {self.width}×{self.height}{scaled}"


@dataclass(frozen=True)
class RefusedImage:
    """An image that is not sent, and why (said to the model, which otherwise would not know)."""

    mime: str
    reason: str


def fit(data: bytes, mime: str, limits: ImageLimits | None = None) -> FittedImage | RefusedImage:
    """``data`` (claimed to be ``mime``) as an image within ``limits``, or why it cannot be."""
    limits = limits or ImageLimits()
    mime = mime.split(";")[0].strip().lower()
    if mime not in DECODED.values():
        return RefusedImage(mime, f"{mime or 'this type'} is not sent as an image (raster PNG, "
                                  "JPEG, GIF or WebP only)")
    if len(data) > SOURCE_MAX_BYTES:
        return RefusedImage(mime, f"it is {len(data):,} bytes, over the {SOURCE_MAX_BYTES:,} "
                                  "read at most")
    try:
        from PIL import Image
    except ImportError:  # a dependency; a broken install still says what is missing
        return RefusedImage(mime, "Pillow is not installed (pip install pillow)")
    try:
        with warnings.catch_warnings():  # Pillow's own bomb warning: refused below anyway
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            opened = Image.open(io.BytesIO(data), formats=list(DECODED))
    except Image.DecompressionBombError:  # past twice Pillow's bound: it refuses to open it
        return RefusedImage(mime, f"it has more pixels than the {SOURCE_MAX_PIXELS:,} decoded "
                                  "at most")
    except Exception as exc:
        return RefusedImage(mime, f"it could not be read as an image ({type(exc).__name__})")
    try:
        with opened as im:
            width, height = im.size
            if width < 1 or height < 1 or width * height > SOURCE_MAX_PIXELS:
                return RefusedImage(mime, f"it is {width}×{height} pixels, over the "
                                          f"{SOURCE_MAX_PIXELS:,} decoded at most")
            found = DECODED[im.format or ""]
            if found in SENT_MIMES and max(width, height) <= limits.max_side \
                    and len(data) <= limits.max_bytes:
                im.load()  # a truncated or corrupt body fails here, not at the provider
                return FittedImage(data, found, width, height, (width, height))
            im.seek(0)  # an animation: its first frame
            im.load()
            return _shrink(im, limits, (width, height))
    except Exception as exc:  # Pillow's errors for damaged input are of many types
        return RefusedImage(mime, f"it could not be read as an image ({type(exc).__name__})")


def _shrink(im: Any, limits: ImageLimits, source: tuple[int, int]) -> FittedImage | RefusedImage:
    from PIL import Image

    side = max(MIN_SIDE, limits.max_side)
    has_alpha = im.mode in ("RGBA", "LA", "PA") or "transparency" in im.info
    im = im.convert("RGBA" if has_alpha else "RGB")
    while True:
        scaled = im.copy()
        scaled.thumbnail((side, side), Image.Resampling.LANCZOS)
        png = _encode(scaled, "PNG")
        if len(png) <= limits.max_bytes:
            return FittedImage(png, "image/png", *scaled.size, source)
        flat = scaled
        if has_alpha:  # JPEG has no alpha: on white, as the chart was drawn
            flat = Image.new("RGB", scaled.size, "white")
            flat.paste(scaled, mask=scaled.getchannel("A"))
        for quality in JPEG_QUALITIES:
            jpeg = _encode(flat, "JPEG", quality=quality)
            if len(jpeg) <= limits.max_bytes:
                return FittedImage(jpeg, "image/jpeg", *scaled.size, source)
        if max(scaled.size) <= MIN_SIDE:
            return RefusedImage("image/png", f"even at {scaled.size[0]}×{scaled.size[1]} it is "
                                             f"over {limits.max_bytes:,} bytes")
        side = max(MIN_SIDE, max(scaled.size) // 2)


def _encode(im: Any, fmt: str, **options: Any) -> bytes:
    buf = io.BytesIO()
    im.save(buf, fmt, **options)
    return buf.getvalue()


def content_part(data: bytes, mime: str) -> dict[str, Any]:
    """The OpenAI-style content part of an image: a base64 data URL."""
    url = f"data:{mime};base64,{base64.b64encode(data).decode()}"
    return {"type": "image_url", "image_url": {"url": url}}


def supports_vision(model: str) -> bool:
    """Whether litellm's model table says ``model`` takes images; False when unknown."""
    from .loading import litellm

    try:
        return bool(litellm().supports_vision(model=model))
    except Exception:  # a model litellm cannot place
        return False
