"""A long answer streams without freezing the page: in the cell widget and in the side panel,
a finished Markdown block keeps its DOM node to the end (it is never rendered again), and in the
panel, which follows the answer's end, the blocks scrolled out of view are skipped by layout and
paint; the long tasks of the stream are printed."""

from __future__ import annotations

import pytest

from tests.browser.stream_probe import long_answer, stream_long_answer

pytestmark = pytest.mark.slow


def test_a_long_streamed_answer_keeps_its_finished_blocks_in_the_cell_and_the_panel(page, lab, script):
    answer = long_answer(30_000)
    got = stream_long_answer(page, lab, script, "long_answer.ipynb", answer)
    print(f"stream {got.stream_ms:.0f} ms, long tasks {got.long_ms:.0f} ms ({got.share:.1%}),"
          f" worst {got.worst_ms:.0f} ms, {got.count} tasks")
    assert [k["panel"] for k in got.kept] == [False, True], got.kept
    for k in got.kept:
        where = "panel" if k["panel"] else "cell"
        assert k["text"], f"the {where}'s text element was replaced while the answer streamed"
        assert k["first"], f"the {where}'s first block was rendered again after it was finished"
        assert k["chars"] > 20_000, k
    # The panel follows the end of the answer: its first block is far above the view, and
    # rendering skips it (a frame costs what is on screen and what changed).
    assert got.panel_skipped, "the panel laid out and painted the answer's first block, off screen, on every frame"
    # The long-task figures are printed, not asserted: on a loaded machine they vary too much;
    # the structural property above is what today's whole re-render per update fails.
    assert not page.forge_errors
