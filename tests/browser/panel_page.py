"""The forge side panel as a test drives it: opened from its icon in the right sidebar, read and
clicked through its data-testid attributes (labextension/src/panel/)."""

from __future__ import annotations

import time
from typing import Any

from tests.browser.lab_helpers import ARTIFACTS, URL_AUDIT

PANEL_ID = "forge-jupyter-panel"

# What nothing the panel shows may contain, whatever the model, a tool or a title said: no
# element that runs or loads something, no event handler attribute anywhere, no URL with
# another scheme than http(s)/mailto (an inline raster image aside), and inside sanitized
# Markdown (.forge-md) none of the form controls the panel itself uses. Read from the DOM,
# attribute by attribute.
AUDIT = """(root) => {""" + URL_AUDIT + """
    const bad = [];
    const NEVER = new Set(['SCRIPT', 'IFRAME', 'OBJECT', 'EMBED', 'STYLE', 'FORM', 'BASE',
        'META', 'LINK', 'FRAME', 'FRAMESET', 'NOSCRIPT', 'TEMPLATE', 'SVG', 'MATH', 'APPLET',
        'AUDIO', 'VIDEO', 'DIALOG']);
    const CONTROLS = new Set(['INPUT', 'BUTTON', 'TEXTAREA', 'SELECT', 'OPTION']);
    for (const el of root.querySelectorAll('*')) {
        const tag = el.tagName.toUpperCase();
        if (NEVER.has(tag)) bad.push('element ' + tag);
        // a code block's Insert / Copy (keep.ts) are the panel's own: inside a container with
        // a data- attribute, which the sanitizer strips from anything the model wrote
        const ours = el.closest('pre.forge-code-kept > [data-forge-code-actions]')
            || (tag === 'PRE' && el.getAttribute('class') === 'forge-code-kept');
        const md = !ours && el.parentElement && el.parentElement.closest('.forge-md');
        if (CONTROLS.has(tag) && md) bad.push('model control ' + tag);
        // classes in Markdown only where marked puts them (code) or the sanitizer does
        if (md && el.getAttribute('class') && tag !== 'CODE'
            && el.getAttribute('class') !== 'forge-blocked-image') bad.push(`${tag} class in Markdown`);
        for (const attr of el.attributes) {
            const name = attr.name.toLowerCase();
            if (name.startsWith('on')) bad.push(`${tag} ${name}=${attr.value.slice(0, 60)}`);
            if (name === 'style' && el.closest('.forge-md')) bad.push(`${tag} style in Markdown`);
            const url = badUrl(tag, attr);
            if (url) bad.push(url);
        }
    }
    return bad.concat(badLinks(root));
}"""


class PanelPage:
    def __init__(self, page: Any) -> None:
        self.page = page
        self.root = page.locator(f"#{PANEL_ID}")

    def open(self) -> PanelPage:
        """Click the panel's icon in the right sidebar, as a person would."""
        self.page.locator(f".jp-SideBar.jp-mod-right .lm-TabBar-tab[data-id='{PANEL_ID}']").click()
        self.root.wait_for(state="visible")
        return self

    def tid(self, name: str) -> Any:
        return self.root.locator(f"[data-testid={name}]")

    # -- the chat --------------------------------------------------------------------------

    def wait_state(self, *states: str, timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        while True:
            state = self.root.get_attribute("data-state")
            if state in states:
                return state
            assert time.monotonic() < deadline, f"panel state {state!r}, expected one of {states}"
            time.sleep(0.05)

    def send(self, prompt: str) -> None:
        box = self.tid("panel-prompt")
        box.fill(prompt)
        box.press("Enter")

    def turns(self) -> Any:
        return self.tid("panel-turn")

    def turn(self, index: int = -1) -> Any:
        turns = self.turns()
        return turns.nth(turns.count() - 1 if index == -1 else index)

    def text_of(self, turn: Any) -> str:
        texts = turn.locator("[data-testid=text]")
        return " ".join(texts.all_text_contents()) if texts.count() else ""

    def wait_turn_done(self, turn: Any, timeout: float = 60) -> None:
        turn.and_(self.page.locator("[data-live=false]")).wait_for(timeout=timeout * 1000)

    # -- the sessions ----------------------------------------------------------------------

    def sessions(self) -> Any:
        self.tid("tab-sessions").click()
        return self.tid("sessions-list")

    def search(self, q: str) -> None:
        self.tid("sessions-search").fill(q)

    def audit(self) -> list[str]:
        return self.root.evaluate(AUDIT)

    def screenshot(self, name: str) -> str:
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        self.page.screenshot(path=str(path))
        return str(path)
