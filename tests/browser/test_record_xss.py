"""The static record and the cell value of a hostile turn, in a real JupyterLab and Chromium.

The model's text, reasoning and answer, a tool's arguments and output, a tool's error and a
made-up tool name all carry the whole XSS corpus (tests/xss_corpus.py). JupyterLab inserts a
running kernel's HTML output unsanitized, runs its scripts and typesets its TeX with MathJax;
after all that, nothing may have run (no dialog, no sentinel), and no element of the outputs may
carry an event handler, a forbidden element, or a URL whose scheme is not http, https or mailto
(an inline raster image aside) — as the DOM holds it, attribute by attribute.
"""

from __future__ import annotations

import pytest

from forge_jupyter.testing import Turn, reasoning, text, tool_call
from tests.browser.lab_helpers import URL_AUDIT, NotebookPage
from tests.tool_cells import ECHO_AND_FAIL_TOOLS as TOOLS
from tests.xss_corpus import ALL_VECTORS

pytestmark = pytest.mark.slow

LOAD = "%load_ext forge_jupyter"

# Sentinels beside the corpus's alert()s: each runs only if its markup survived.
SENTINELS = "\n\n".join([
    '<img src=x onerror="window.__forgePwned=1">',
    "[click](javascript:window.__forgePwned=2)",
    "> [ref]: javascript:window.__forgePwned=3\n\n[ref]",
    "- [d]: data:text/html;base64,PHNjcmlwdD5wYXJlbnQuX19mb3JnZVB3bmVkPTQ8L3NjcmlwdD4=\n\n[d]",
    "<JaVaScRiPt:window.__forgePwned=5>",
    "$\\href{javascript:window.__forgePwned=6}{tex link}$ and $$\\href{javascript:0}{x}$$",
])
CORPUS = "\n\n".join(v for _, v in ALL_VECTORS)
PAYLOAD = SENTINELS + "\n\n" + CORPUS
LEGIT = ("# Findings\n\nSee [the docs](https://example.com/docs).\n\n| col | n |\n|---|--:|\n"
         "| region | 12 |\n\n```html\n<script>shown as code</script>\n```\n\nEnd of answer.")

# Everything that cannot be in an output; MathML only as MathJax's own assistive copy.
AUDIT = """(outputs) => {""" + URL_AUDIT + """
    const bad = [];
    const FORBIDDEN = new Set(['SCRIPT', 'IFRAME', 'OBJECT', 'EMBED', 'STYLE', 'FORM', 'BASE',
        'META', 'LINK', 'FRAME', 'FRAMESET', 'NOSCRIPT', 'TEMPLATE', 'INPUT', 'BUTTON', 'SVG']);
    for (const out of outputs) {
        for (const el of out.querySelectorAll('*')) {
            // forge's own control on the record (Revert to here): a property markup cannot set
            if (el.forgeControl === true && el.matches('.forge-record > .forge-header > button')) continue;
            const tag = el.tagName.toUpperCase();
            if (FORBIDDEN.has(tag)) bad.push('element ' + tag);
            if (tag === 'MATH' && !el.closest('mjx-assistive-mml')) bad.push('model <math>');
            for (const attr of el.attributes) {
                const name = attr.name.toLowerCase();
                if (name.startsWith('on')) bad.push(`${tag} ${name}=${attr.value}`);
                const url = badUrl(tag, attr);
                if (url) bad.push(url);
            }
        }
        bad.push(...badLinks(out));
    }
    return bad;
}"""


def test_a_hostile_turn_leaves_a_record_and_value_that_run_nothing(page, lab, script):
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    script.add(Turn([reasoning(PAYLOAD, chunk=400), text(PAYLOAD, chunk=400),
                     tool_call("echo", {"text": PAYLOAD}), tool_call("fail", {"text": PAYLOAD}),
                     tool_call('<img src=x onerror="window.__forgePwned=7">', {"x": PAYLOAD})]),
               Turn.text(LEGIT + "\n\n" + PAYLOAD, chunk=400))
    lab.write_notebook("record_xss.ipynb", [LOAD, TOOLS, "%%forge\nSay something hostile."])
    nb = NotebookPage(page, lab, "record_xss.ipynb").open()
    nb.run_all()
    nb.wait_idle(2, timeout=120)
    outputs = nb.cell(2).locator(".jp-OutputArea-output")
    page.wait_for_function(
        """() => document.querySelectorAll(
            '.jp-Cell:nth-child(3) .jp-OutputArea-output[data-mime-type="text/html"]').length == 2
        """, timeout=30_000)
    page.wait_for_timeout(2_000)  # MathJax typesets after insertion
    nb.screenshot("record-xss")

    record, value = outputs.nth(0), outputs.nth(1)
    assert "Say something hostile" not in record.inner_text()
    for name in ("echo", "fail", "completed", "error", "onerror"):
        assert name in record.inner_text(), name  # the work is shown, hostile text as text
    assert value.locator("h1", has_text="Findings").count() == 1
    assert value.locator("a[href='https://example.com/docs']").count() == 1
    assert value.locator("table td:text-is('region')").count() == 1
    assert "<script>shown as code</script>" in value.locator("pre").first.inner_text()
    assert "End of answer." in value.inner_text()

    assert outputs.evaluate_all(AUDIT) == []
    assert page.evaluate("window.__forgePwned") is None
    assert dialogs == []

    # Saved, the notebook keeps exactly this HTML (no Markdown for another renderer to read),
    # and opened again from disk it audits the same.
    nb.save()
    saved = lab.read_notebook("record_xss.ipynb").cells[2].outputs
    rich = [sorted(o.data) for o in saved if o.get("data")]  # (a cleared note has none)
    assert rich == [["text/html", "text/plain"]] * 2
    assert not page.forge_errors
    again = NotebookPage(page, lab, "record_xss.ipynb").open()
    reopened = again.cell(2).locator(".jp-OutputArea-output")
    reopened.nth(1).locator("h1", has_text="Findings").wait_for()
    page.wait_for_timeout(2_000)
    assert reopened.evaluate_all(AUDIT) == []
    assert page.evaluate("window.__forgePwned") is None and dialogs == []
