"""Mentions from the side panel's box, in a real JupyterLab and Chromium: typing ``@`` offers
what the notebook's kernel holds (variables, ``In [N]``, ``error``, ``file:`` paths, ``cell:``
ids); arrows move, Tab or Enter accepts, Escape closes; the prompt sent resolves its mentions
as a ``%%forge`` cell does, and the fake model server records what the model was sent.

One JupyterLab and one browser for the folder (conftest.py).
"""

from __future__ import annotations

import base64
import io
import json
from typing import Any

import pytest

from forge_jupyter.testing import Turn
from tests.browser.lab_helpers import NotebookPage, in_both_themes
from tests.browser.panel_page import PanelPage

pytestmark = pytest.mark.slow

BOX = "#forge-jupyter-panel [data-testid=panel-prompt]"


def offered(page: Any) -> list[str]:
    """The menu's entries as the person reads them (empty when it is closed)."""
    menu = page.locator("#forge-jupyter-panel [data-testid=panel-mentions]")
    if menu.is_hidden():
        return []
    return [name.inner_text() for name in menu.locator(".forge-panel-mention-name").all()]


def wait_offer(page: Any, expect: Any) -> list[str]:
    seen: list[str] = []
    for _ in range(100):
        seen = offered(page)
        if expect(seen):
            return seen
        page.wait_for_timeout(50)
    raise AssertionError(f"the menu shows {seen}")


def _active_contrast(page: Any) -> float:
    """WCAG contrast of the chosen menu entry's name against its background."""
    return page.evaluate("""() => {
        const el = document.querySelector('#forge-jupyter-panel .forge-panel-mention.forge-active');
        const rgb = c => c.match(/[\\d.]+/g).slice(0, 3).map(Number);
        const lum = c => { const v = rgb(c).map(x => { x /= 255;
            return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4; });
            return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2]; };
        const name = el.querySelector('.forge-panel-mention-name');
        const a = lum(getComputedStyle(name).color), b = lum(getComputedStyle(el).backgroundColor);
        return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    }""")


def test_the_box_completes_mentions_from_the_kernel_and_sends_them_resolved(page, lab, script,
                                                                           screenshots):
    (lab.root / "mention_data").mkdir(exist_ok=True)
    (lab.root / "mention_data" / "orders.csv").write_text("region,orders\nnorth,1234567\n")
    lab.write_notebook("mentions.ipynb", ["%load_ext forge_jupyter",
                                          "sales_by_region = {'north': 98765, 'south': 4321}",
                                          "1 / 0"])
    nb = NotebookPage(page, lab, "mentions.ipynb").open()
    for i in range(3):
        nb.run_cell(i)
        nb.wait_idle(i)
    panel = PanelPage(page).open()
    panel.wait_state("attached")
    box = page.locator(BOX)
    box.click()

    page.keyboard.type("@")  # everything the kernel can point at
    everything = wait_offer(page, lambda s: "@error" in s)
    assert "@sales_by_region" in everything and "@In[2]" in everything
    assert "@file:" in everything and any(s.startswith("@cell:") for s in everything), everything
    for theme in in_both_themes(page):  # the pictures of docs/notebook-context.md
        path = screenshots / f"panel-mentions-{theme}.png"
        page.locator("#forge-jupyter-panel").screenshot(path=str(path))
        assert 0 < path.stat().st_size < 400_000
        assert _active_contrast(page) >= 4.5, theme  # the chosen entry stays readable
    page.keyboard.press("Escape")
    assert offered(page) == [] and box.input_value() == "@", "Escape closes, the text stays"

    box.fill("")
    page.keyboard.type("Compare @sal")
    assert wait_offer(page, lambda s: s == ["@sales_by_region"])
    page.keyboard.press("Tab")
    assert box.input_value() == "Compare @sales_by_region " and offered(page) == []

    page.keyboard.type("with @file:mention_d")
    assert wait_offer(page, lambda s: s == ["@file:mention_data/"])
    page.keyboard.press("Enter")  # a folder: the menu goes on into it
    assert wait_offer(page, lambda s: s == ["@file:mention_data/orders.csv"])
    page.keyboard.press("ArrowDown")  # one entry: the arrows come back to it
    page.keyboard.press("Enter")
    assert box.input_value() == "Compare @sales_by_region with @file:mention_data/orders.csv "
    assert offered(page) == []

    script.add(Turn.text("North leads."))
    asked = len(script.requests)
    page.keyboard.press("Enter")  # the menu is closed: Enter sends
    turn = panel.turns().first
    turn.wait_for(timeout=60_000)
    panel.wait_turn_done(turn)
    assert len(script.requests) == asked + 1
    sent = json.dumps(script.requests[-1].messages)
    assert "98765" in sent, "the variable, as the variables tool inspects it"
    assert "1234567" in sent, "the file, as the read tool shows it"
    assert "@sales_by_region, attached by forge" in sent
    assert not page.forge_errors


def png(width: int, height: int) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 30)).save(out, format="PNG")
    return out.getvalue()


def paste(page: Any, data: bytes, name: str = "chart.png") -> None:
    """A PNG pasted into the box, as the browser hands a paste over (ClipboardEvent, DataTransfer)."""
    page.evaluate("""([b64, name]) => {
        const bytes = Uint8Array.from(atob(b64), c => c.charCodeAt(0));
        const dt = new DataTransfer();
        dt.items.add(new File([bytes], name, {type: 'image/png'}));
        const box = document.querySelector('#forge-jupyter-panel [data-testid=panel-prompt]');
        box.dispatchEvent(new ClipboardEvent('paste', {clipboardData: dt, bubbles: true, cancelable: true}));
    }""", [base64.b64encode(data).decode(), name])


def user_content(request: Any) -> Any:
    return [m for m in request.messages if m.get("role") == "user"][-1]["content"]


def test_a_pasted_png_reaches_a_vision_model_as_an_image_and_others_as_a_line(page, lab, script):
    lab.write_notebook("pasted.ipynb", ["%load_ext forge_jupyter",
                                        "%config Forge.model = 'openai/gpt-4o-mini'"])
    nb = NotebookPage(page, lab, "pasted.ipynb").open()
    nb.run_cell(0)
    nb.wait_idle(0)
    panel = PanelPage(page).open()
    panel.wait_state("attached")
    box = page.locator(BOX)

    def send_pasted(prompt: str) -> Any:
        box.click()
        paste(page, png(1600, 900))
        chip = page.locator("#forge-jupyter-panel [data-testid=panel-image]")
        chip.wait_for()
        assert "chart.png" in chip.inner_text()
        assert box.input_value() == "", "the image is no text in the box"
        page.keyboard.type(prompt)
        script.add(Turn.text("A red rectangle."))
        asked, shown = len(script.requests), panel.turns().count()
        page.keyboard.press("Enter")
        turn = panel.turns().nth(shown)
        turn.wait_for(timeout=60_000)
        panel.wait_turn_done(turn)
        assert len(script.requests) == asked + 1 and chip.count() == 0
        return user_content(script.requests[-1])

    content = send_pasted("And now?")  # the lab's fake model: no vision, a line in its place
    assert isinstance(content, str) and "image_url" not in json.dumps(script.requests[-1].messages)
    assert "And now?" in content and "pasted image/png 1024×576 (from 1600×900)" in content
    assert "this model does not take images" in content

    nb.run_cell(1)  # a model litellm says has vision is sent the image itself
    nb.wait_idle(1)
    content = send_pasted("What is in this picture?")
    assert isinstance(content, list), content
    [text] = [c["text"] for c in content if c["type"] == "text"]
    [image] = [c["image_url"]["url"] for c in content if c["type"] == "image_url"]
    assert text.startswith("What is in this picture?") and "base64" not in text
    assert image.startswith("data:image/") and len(image) < 2_000_000
    from PIL import Image

    sent = Image.open(io.BytesIO(base64.b64decode(image.split(",", 1)[1])))
    assert max(sent.size) <= 1024 and sent.size[0] > sent.size[1], "scaled down, its shape kept"
    assert not page.forge_errors
