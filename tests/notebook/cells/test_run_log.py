"""A failed cell summarized for the context note (notebook/cells/run_log.py): bounded, never raising."""

from __future__ import annotations

from forge_jupyter.notebook.cells.run_log import summarize_error


class Hostile(Exception):
    def __str__(self):
        raise RuntimeError("no")

def test_an_error_whose_message_cannot_be_read_is_summarized_not_raised():
    s = summarize_error(Hostile())
    assert s.ename == "Hostile" and "could not be read" in s.evalue

def test_a_huge_message_is_cut_before_it_is_split():
    s = summarize_error(ValueError("x " * 5_000_000))
    assert len(s.evalue) <= 501 and s.evalue.endswith("…")


def test_a_history_entry_of_blank_lines_is_read_back_in_linear_time():
    """The line-magic pattern's indentation was ``\\s*``, which also crossed line ends: an
    entry of many blank lines took quadratic time (100,000 of them: most of a minute)."""
    import time

    from forge_jupyter.notebook.cells.document import as_written

    for source in ("\n" * 100_000, " \n" * 50_000, "\n\t" * 50_000 + "x"):
        start = time.process_time()
        assert as_written(source) == source
        assert time.process_time() - start < 2.0
    indented = "    get_ipython().run_line_magic('time', 'x = 1')"
    assert as_written(indented) == "    %time x = 1"
