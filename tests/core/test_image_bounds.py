"""Images are untrusted input: each bound of llm/images.py holds before anything is decoded,
and a vision model is told why it was not sent what it was not sent (issue 27, item 3)."""

from __future__ import annotations

import io
import struct
import zlib

import pytest

from forge_jupyter.llm.images import (
    SOURCE_MAX_BYTES,
    FittedImage,
    ImageLimits,
    RefusedImage,
    fit,
)
from forge_jupyter.testing import Turn, tool_call

Image = pytest.importorskip("PIL.Image")


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def png_header(width: int, height: int, idat: bytes | None = None) -> bytes:
    """A PNG that says it is ``width``×``height``: a decompression bomb's header when large."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    body = idat if idat is not None else zlib.compress(b"\0" * 64)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", body)
            + _chunk(b"IEND", b""))


def real_png(width: int, height: int, noise: bool = False) -> bytes:
    import os

    im = (Image.frombytes("RGB", (width, height), os.urandom(width * height * 3)) if noise
          else Image.new("RGB", (width, height), (200, 30, 30)))
    buf = io.BytesIO()
    im.save(buf, "PNG")
    return buf.getvalue()


SVG = b'<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>'


@pytest.mark.parametrize("width,height", [(20_000, 20_000), (50_001, 1_000), (1, 60_000_000)])
def test_a_decompression_bomb_is_refused_from_its_header(width, height):
    refused = fit(png_header(width, height), "image/png")
    assert isinstance(refused, RefusedImage)
    assert "pixels" in refused.reason and "50,000,000 decoded at most" in refused.reason


@pytest.mark.parametrize("data", [
    png_header(64, 64, idat=b"not zlib at all"),  # a damaged body under a good header
    real_png(40, 30)[:60],  # cut off
    b"\x89PNG\r\n\x1a\n" + b"\0" * 40,  # a signature and nothing else
    b"GIF89a" + b"\xff" * 30,
], ids=["bad-idat", "truncated", "signature-only", "bad-gif"])
def test_a_damaged_image_is_refused_not_half_sent(data):
    refused = fit(data, "image/png")
    assert isinstance(refused, RefusedImage) and "could not be read as an image" in refused.reason


@pytest.mark.parametrize("mime", ["image/svg+xml", "image/svg+xml; charset=utf-8", "text/html",
                                  "application/pdf", ""])
def test_an_svg_or_other_type_is_never_sent_as_an_image(mime):
    refused = fit(SVG, mime)
    assert isinstance(refused, RefusedImage) and "is not sent as an image" in refused.reason


def test_svg_bytes_claiming_to_be_png_are_refused():
    assert isinstance(fit(SVG, "image/png"), RefusedImage)


def test_a_50_mb_image_is_refused_before_it_is_opened():
    big = real_png(8, 8) + b"\0" * 50_000_000
    refused = fit(big, "image/png")
    assert isinstance(refused, RefusedImage)
    assert f"over the {SOURCE_MAX_BYTES:,} read at most" in refused.reason


def test_a_large_image_is_scaled_to_the_side_and_byte_caps():
    fitted = fit(real_png(3000, 1500, noise=True), "image/png",
                 ImageLimits(max_side=500, max_bytes=80_000))
    assert isinstance(fitted, FittedImage)
    assert max(fitted.width, fitted.height) <= 500 and len(fitted.data) <= 80_000
    assert fitted.mime == "image/jpeg"  # noise does not fit as PNG: JPEG does
    assert fitted.label.endswith("(from 3000×1500)")
    assert Image.open(io.BytesIO(fitted.data)).size == (fitted.width, fitted.height)


def test_an_image_within_the_caps_is_sent_as_it_came():
    data = real_png(300, 200)
    fitted = fit(data, "image/png")
    assert isinstance(fitted, FittedImage) and fitted.data == data and fitted.label == "image/png 300×200"


def test_a_jpeg_claimed_as_png_is_sent_as_what_it_is():
    buf = io.BytesIO()
    Image.new("RGB", (20, 10), "blue").save(buf, "JPEG")
    fitted = fit(buf.getvalue(), "image/png")
    assert isinstance(fitted, FittedImage) and fitted.mime == "image/jpeg"


class Shows:
    """A value showing itself as ``mime`` with ``data`` (IPython's _repr_*_ protocol)."""

    def __init__(self, png: bytes | None = None, jpeg: bytes | None = None):
        self.png, self.jpeg = png, jpeg

    def _repr_png_(self):
        return self.png

    def _repr_jpeg_(self):
        return self.jpeg


def test_bad_images_reach_a_vision_model_as_what_it_is_told(make_forge, server, tmp_path):
    """Through the whole path: a bomb, a damaged PNG and a real JPEG shown by one call."""
    buf = io.BytesIO()
    Image.new("RGB", (30, 20), "green").save(buf, "JPEG")
    ns = {"bomb": Shows(png_header(20_000, 20_000)), "damaged": Shows(png_header(9, 9, b"xx")),
          "photo": Shows(jpeg=buf.getvalue())}
    server.add(Turn([tool_call("python", {"code": name}, id=f"call_{name}")
                     for name in ("bomb", "damaged", "photo")]), Turn.text("Seen."))
    forge = make_forge(model="openai/gpt-4o", builtin_tools=True, permissions=["python:*=allow"],
                       namespace=ns, output_root=tmp_path / "outputs")
    forge.session("s").prompt("show them")
    second = server.requests[1].body["messages"]
    told = {m["tool_call_id"]: m["content"] for m in second if m["role"] == "tool"}
    assert ("[image 1 (image/png 20000×20000) is not sent to you: it has more pixels than the "
            "50,000,000 decoded at most]") in told["call_bomb"]
    assert "[image 1 (image/png 9×9) is not sent to you: it could not be read" in told["call_damaged"]
    assert "not sent" not in told["call_photo"]
    urls = [c["image_url"]["url"] for m in second if isinstance(m.get("content"), list)
            for c in m["content"] if c.get("type") == "image_url"]
    assert len(urls) == 1 and urls[0].startswith("data:image/jpeg;base64,")
