"""An approval shows the code it approves: in the cell's live widget and in the side panel's
card, a pending ``python`` call's code is open, highlighted by JupyterLab's own highlighter,
one line per row (a long identifier scrolls sideways, never wraps), and for 200 lines its first
and last lines are in view with the middle folded. A second ask below the fold is brought into
view when the person answered the first there, and the status line signposts one out of view.

Writes light and dark pictures of both (docs/_static/screenshots/ with FORGE_WRITE_SCREENSHOTS=1).
"""

from __future__ import annotations

import time

import pytest

from forge_jupyter.testing import Turn, tool_call
from tests.browser.lab_helpers import MAX_SCREENSHOT_BYTES, NotebookPage, forge_cell, set_theme
from tests.browser.panel_page import PanelPage

pytestmark = pytest.mark.slow

LOAD = "%load_ext forge_jupyter"
LONG_NAME = "monthly_revenue_by_region_and_product_line_after_returns_and_discounts_" * 3
FIRST = "import time"
LAST = 'print("the last of two hundred lines")'


def program(tag: str) -> str:
    """200 lines: an import first, a long identifier, a print last."""
    body = [FIRST, f"{LONG_NAME}{tag} = {{'north': 1240, 'south': 980}}"]
    body += [f"value_{tag}_{i} = {i} * 2  # step {i}" for i in range(3, 200)]
    return "\n".join([*body, LAST])


# Where the code's lines sit, and whether the long identifier kept to one row.
MEASURE = """(block) => {
    const lines = [...block.querySelectorAll(':scope > .forge-code-line')];
    const view = {top: 0, bottom: window.innerHeight};
    const box = block.getBoundingClientRect();
    const inView = (el) => { const r = el.getBoundingClientRect();
        return r.height > 0 && r.top >= Math.max(view.top, box.top) - 1
            && r.bottom <= Math.min(view.bottom, box.bottom) + 1; };
    const long = lines.find((l) => l.textContent.includes('monthly_revenue'));
    return {
        first: lines[0].textContent, last: lines[lines.length - 1].textContent,
        firstInView: inView(lines[0]), lastInView: inView(lines[lines.length - 1]),
        lineHeight: lines[0].getBoundingClientRect().height,
        longHeight: long.getBoundingClientRect().height,
        scrolls: block.scrollWidth > block.clientWidth,
        tokens: block.querySelectorAll('.forge-code-line span[class]').length,
        more: block.querySelector('[data-testid=code-more] > summary').textContent,
    };
}"""

# The colour of the first token `import` against the line's own: highlighted, not plain.
KEYWORD = """(block) => {
    const span = [...block.querySelectorAll('.forge-code-line span[class]')]
        .find((s) => s.textContent === 'import');
    return span ? [getComputedStyle(span).color, getComputedStyle(span.parentElement).color] : null;
}"""

IN_VIEW = """(el) => { const r = el.getBoundingClientRect();
    return r.height > 0 && r.top >= 0 && r.bottom <= window.innerHeight; }"""


def wait_in_view(locator, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not locator.evaluate(IN_VIEW):
        assert time.monotonic() < deadline, "not brought into view"
        time.sleep(0.1)


def check_code(where: str, view, highlighted: bool = True) -> None:
    """The pending call's code in ``view`` (a widget or a panel turn) as the person must see it:
    highlighted by JupyterLab where the labextension is on the page, plain where it is not."""
    args = view.locator("[data-testid=tool-args]").last
    assert args.evaluate("(d) => d.open"), f"{where}: the pending call's arguments are open"
    block = args.locator("[data-testid=code]")
    if highlighted:
        block.locator(".forge-code-line span[class]").first.wait_for()
    # The person scrolls up to the call's head (a wheel first: the panel's chat follows its
    # end until its reader moves it), as they would to read it.
    box, height = view.bounding_box(), view.page.viewport_size["height"]
    top, bottom = max(box["y"], 0), min(box["y"] + box["height"], height)
    view.page.mouse.move(box["x"] + 20, (top + bottom) / 2)  # over the view's visible part
    view.page.mouse.wheel(0, -40)
    block.scroll_into_view_if_needed()
    block.evaluate("(b) => b.closest('.forge-tool').scrollIntoView({block: 'start'})")
    got = block.evaluate(MEASURE)
    assert got["first"] == FIRST and got["last"] == LAST, (where, got)
    assert got["firstInView"] and got["lastInView"], (where, "head and tail in view", got)
    assert got["more"] == "… 178 more lines …", (where, got)
    assert got["scrolls"], (where, "the long line scrolls sideways", got)
    assert abs(got["longHeight"] - got["lineHeight"]) < 1, (where, "the long identifier sits on one row", got)
    if not highlighted:
        assert got["tokens"] == 0, (where, "plain code without the labextension", got)
        return
    assert got["tokens"] >= 20, (where, "tokens carry the highlighter's classes", got)
    colours = block.evaluate(KEYWORD)
    assert colours and colours[0] != colours[1], (where, "the keyword is coloured", colours)


def test_a_pending_python_call_shows_its_code_open_highlighted_head_and_tail(page, lab, script, screenshots):
    page.set_viewport_size({"width": 1280, "height": 720})
    script.add(Turn([tool_call("python", {"code": program("a")})]),
               Turn([tool_call("python", {"code": program("b")})]),
               Turn.text("Both ran."))
    filler = "\n".join(f"# a note above the run, line {i}" for i in range(12))
    lab.write_notebook("approve_code.ipynb", [LOAD, filler, forge_cell("Sum the revenue.")])
    nb = NotebookPage(page, lab, "approve_code.ipynb").open()
    panel = PanelPage(page).open()
    nb.run_cell(0)
    nb.wait_idle(0)
    panel.wait_state("attached")
    nb.run_cell(2)
    widget = nb.widget(2)
    widget.locator("[data-testid=approve-once]").wait_for(timeout=90_000)
    turn = panel.turns().last
    turn.locator("[data-testid=approve-once]").wait_for()

    check_code("widget", widget)
    check_code("panel", turn)
    # The whole code, a click away.
    more = widget.locator("[data-testid=code-more]")
    more.locator("summary").click()
    more.locator(".forge-code-line").nth(177).wait_for()  # built once opened (the toggle event)
    assert more.locator(".forge-code-line").count() == 178
    more.locator("summary").click()

    # Out of view, the ask is signposted from the status line, which scrolls to it.
    signpost = widget.locator("[data-testid=approvals-waiting]")
    widget.locator("[data-testid=status]").evaluate("(s) => s.scrollIntoView({block: 'start'})")
    nb.cell(1).evaluate("(c) => c.scrollIntoView({block: 'start'})")
    ask = widget.locator("[data-testid=approval]")
    assert not ask.evaluate(IN_VIEW), "the layout puts the ask below the fold"
    signpost.wait_for()
    assert signpost.inner_text() == "1 approval waiting ↓"
    assert widget.locator("[data-testid=status]").inner_text() == "Waiting for your approval"
    signpost.click()
    wait_in_view(widget.locator("[data-testid=approve-once]"))

    for theme, light in (("light", True), ("dark", False)):
        if not light:
            set_theme(page, "JupyterLab Dark", light=False)
        widget.locator("[data-testid=tool]").evaluate("(t) => t.scrollIntoView({block: 'start'})")
        widget.locator("[data-testid=tool]").screenshot(path=str(screenshots / f"approval-code-widget-{theme}.png"))
        turn.locator("[data-testid=approval]").evaluate("(t) => t.scrollIntoView({block: 'end'})")
        page.screenshot(path=str(screenshots / f"approval-code-panel-{theme}.png"))
    set_theme(page, "JupyterLab Light", light=True)

    # Answered here, the next ask (below the first card) is brought into view.
    widget.locator("[data-testid=approve-once]").click()
    second = widget.locator("[data-testid=approval]:not([data-answer])")
    second.wait_for(timeout=60_000)
    wait_in_view(second.locator("[data-testid=approve-once]"))
    first_args = widget.locator("[data-testid=tool]").first.locator("[data-testid=tool-args]")
    assert not first_args.evaluate("(d) => d.open"), "a decided call folds its arguments as before"
    second.locator("[data-testid=approve-once]").click()
    nb.wait_idle(2, timeout=60)

    for name in ("widget-light", "widget-dark", "panel-light", "panel-dark"):
        size = (screenshots / f"approval-code-{name}.png").stat().st_size
        assert 0 < size < MAX_SCREENSHOT_BYTES, (name, size)
    assert not page.forge_errors



def test_without_the_labextension_the_code_is_open_plain_and_unwrapped(page, lab, script, labextension_disabled):
    script.add(Turn([tool_call("python", {"code": program("a")})]), Turn.text("Not run."))
    lab.write_notebook("approve_plain.ipynb", [LOAD, forge_cell("Sum the revenue.")])
    nb = NotebookPage(page, lab, "approve_plain.ipynb").open()
    nb.run_all()
    widget = nb.widget(1)
    widget.locator("[data-testid=deny]").wait_for(timeout=90_000)
    assert not page.evaluate("() => !!globalThis[Symbol.for('forge-jupyter.render')]"), "no labextension"
    check_code("bare widget", widget, highlighted=False)
    widget.locator("[data-testid=deny]").click()
    nb.wait_idle(1, timeout=60)
    assert not page.forge_errors
