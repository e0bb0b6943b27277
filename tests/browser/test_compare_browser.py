"""``%%forge --compare`` in a real JupyterLab: the answers side by side in the cell, and one
click on "Continue here" makes that model's fork the notebook's session — the next %%forge
cell goes on there. Pictures in both themes for docs/compare.md."""

from __future__ import annotations

import pytest

from forge_jupyter.testing import Turn
from tests.browser.lab_helpers import NotebookPage, forge_cell, in_both_themes

pytestmark = pytest.mark.slow

MAX_SCREENSHOT_BYTES = 400_000
LOAD = "%load_ext forge_jupyter"
WHO = "print('current:', get_ipython()._forge_magics.controller.current_session_id)"
ANSWERS = {
    "model-a": "A bar chart: the categories are few and the reader compares their sizes.",
    "model-b": "A dot plot: it shows the same comparison with less ink, and sorts well.",
}


def by_model(request):
    return Turn.text(ANSWERS.get(request.body.get("model"), "?"))


def test_answers_side_by_side_and_continue_here_in_one_click(page, lab, script, screenshots):
    script.add(by_model, by_model)
    lab.write_notebook("compare.ipynb", [
        LOAD, forge_cell("Which chart suits monthly sales by region?",
                         "--compare openai/model-a,openai/model-b"), WHO])
    nb = NotebookPage(page, lab, "compare.ipynb").open()
    nb.run_cell(0)
    nb.wait_idle(0)
    nb.run_cell(1)
    nb.wait_idle(1)
    view = nb.cell(1).locator(".forge-compare")
    view.wait_for(timeout=30_000)
    heads = view.locator("th").all_inner_texts()
    assert heads == ["openai/model-a", "openai/model-b"]
    answers = view.locator(".forge-compare-answer").all_inner_texts()
    assert answers == [ANSWERS["model-a"], ANSWERS["model-b"]]
    assert "tokens in / out" in view.inner_text()
    for theme in in_both_themes(page):
        nb.cell(1).scroll_into_view_if_needed()
        path = screenshots / f"compare-{theme}.png"
        nb.cell(1).screenshot(path=str(path))
        assert 0 < path.stat().st_size < MAX_SCREENSHOT_BYTES

    button = view.locator("button.forge-compare-use").nth(1)
    fork = button.get_attribute("data-forge-use")
    button.click()
    page.wait_for_function(
        "() => [...document.querySelectorAll('.forge-compare-chosen')].some("
        "b => b.textContent.startsWith('Continuing here'))", timeout=15_000)
    nb.run_cell(2)
    nb.wait_idle(2)
    printed = "".join(o.get("text", "") for o in nb.outputs(2))
    assert printed.strip() == f"current: {fork}"
    assert not page.forge_errors
