"""Where the cell widget's renderer comes from (issue 13, items 2 and 4).

The widget's state carries only a bootstrap (forge_jupyter/static/widget_boot.js). With the
labextension installed (the normal case, `pip install`) the bootstrap renders with the
extension's renderer, which the page already has; without it (VS Code, Colab, a JupyterLab
where the extension is disabled) the bootstrap asks the kernel for the standalone renderer and
its CSS over the widget's comm. Either way the turn streams live and ends as its record.

The labextension is disabled for one page by JupyterLab's own page config
({JUPYTER_CONFIG_DIR}/labconfig/page_config.json, read again for every page load), the way
`jupyter labextension disable forge-jupyter` does.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from forge_jupyter.testing import Turn, text
from tests.browser.lab_helpers import Lab, NotebookPage, forge_cell

pytestmark = pytest.mark.slow

LOAD = "%load_ext forge_jupyter"
WORDS = " ".join(f"word{i}" for i in range(100))
HAS_RENDERER = "() => !!globalThis[Symbol.for('forge-jupyter.render')]"
INJECTED_CSS = "() => !!document.getElementById('forge-jupyter-css')"



def styled(page) -> bool:
    """The widget's CSS applies (its header is a flex row), whoever brought it."""
    return page.evaluate("""() => {
        const el = document.querySelector('.jp-Notebook .forge-turn .forge-header');
        return !!el && getComputedStyle(el).display === 'flex';
    }""")


def stream_a_turn(page, lab: Lab, name: str, script) -> None:
    """Run a slow %%forge cell: its text grows in the styled widget while the cell runs, then
    the widget gives way to the record and the answer is the cell's value."""
    script.add(Turn([text(WORDS, chunk=6)], chunk_delay=0.05))  # ~120 chunks over ~6 s
    lab.write_notebook(name, [LOAD, forge_cell("Count some words, slowly.")])
    nb = NotebookPage(page, lab, name).open()
    nb.run_all()
    nb.wait_busy(1)
    nb.widget(1).wait_for()
    lengths: list[int] = []
    while nb.busy(1):
        texts = nb.widget(1).locator("[data-testid=text]")
        n = len(" ".join(texts.all_text_contents())) if texts.count() else 0
        if n and (not lengths or n != lengths[-1]):
            if not lengths:
                assert styled(page), "the live widget has its CSS"
                nb.screenshot(f"{Path(name).stem}-streaming")
            lengths.append(n)
        time.sleep(0.1)
    assert len(lengths) >= 3, f"the text should grow while the cell runs, saw lengths {lengths}"
    assert lengths == sorted(lengths)
    nb.wait_idle(1)
    assert page.locator(".jp-Notebook [data-testid=forge-turn]").count() == 0  # the record took its place
    value = [o for o in nb.outputs(1) if o["output_type"] == "execute_result"]
    assert value and WORDS in value[0]["data"]["text/html"]
    assert not page.forge_errors


def test_with_the_labextension_the_widget_renders_with_the_extensions_renderer(page, lab, script):
    stream_a_turn(page, lab, "with-labextension.ipynb", script)
    assert page.evaluate(HAS_RENDERER), "the labextension should be loaded (pip install -e .)"
    # The kernel was never asked for the code: nothing injected the standalone CSS.
    assert not page.evaluate(INJECTED_CSS)


def test_without_the_labextension_the_kernel_sends_the_widget_its_code(
        page, lab, script, labextension_disabled):
    stream_a_turn(page, lab, "without-labextension.ipynb", script)
    assert not page.evaluate(HAS_RENDERER), "the labextension should be disabled on this page"
    assert page.evaluate(INJECTED_CSS)
