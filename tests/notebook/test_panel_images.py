"""Images pasted into the side panel's box as the kernel reads them from the comm (untrusted
input from a page) and holds them until the prompt naming them runs."""

from __future__ import annotations

import base64

import pytest

from forge_jupyter.notebook import panel_protocol as proto
from forge_jupyter.notebook.panel import PanelHub
from forge_jupyter.notebook.pasted import PASTED_KEPT

ID = "paste_0123456789abcdef"


def image(**over):
    return {"type": "image", "image_id": ID, "mime": "image/png",
            "data": base64.b64encode(b"\x89PNG...").decode(), **over}


def test_a_pasted_image_is_checked_field_by_field():
    assert proto.parse(image()) == proto.PastedImage(ID, "image/png", b"\x89PNG...")
    for bad, said in [({"image_id": "../x"}, "image_id"), ({"mime": "image/svg+xml"}, "not an image"),
                      ({"data": "%%%"}, "not base64"), ({"data": "A" * 14_000_000}, "over 10 MB")]:
        with pytest.raises(proto.PanelError, match=said):
            proto.parse(image(**bad))


def test_the_hub_holds_a_few_images_each_taken_once():
    hub = PanelHub()
    ids = [f"paste_{n:010d}" for n in range(PASTED_KEPT + 2)]
    for i in ids:
        hub._handle(None, image(image_id=i))
    assert hub.pasted.take(ids[-1:]) == [(b"\x89PNG...", "image/png")]
    with pytest.raises(ValueError, match="paste it again"):
        hub.pasted.take(ids[-1:])  # taken already
    with pytest.raises(ValueError, match="paste it again"):
        hub.pasted.take(ids[:1])  # the oldest went first
    with pytest.raises(ValueError, match="at most 4"):
        hub.pasted.take(ids[2:7])
