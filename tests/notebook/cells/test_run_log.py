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
