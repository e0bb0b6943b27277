"""History as data is one object, ``forge.data``; the documented spellings (``forge.costs()``,
…) are made from its one list of names and give the same frames."""

from __future__ import annotations

import inspect

import pandas as pd

from forge_jupyter import Forge, frames
from forge_jupyter.history_data import HistoryData


def calls(run) -> list[tuple[str, tuple, dict]]:
    alpha = run.sessions["alpha"].id
    return [
        ("sessions", (), {}), ("messages", (alpha,), {}), ("parts", (), {"type": "tool"}),
        ("tool_calls", (), {}), ("costs", ("day",), {}), ("costs", (["model", "agent"],), {}),
        ("compactions", (), {}), ("context", (alpha,), {}), ("turns", (), {}),
        ("history", (alpha,), {}), ("events", (), {}),
        ("sql", ("select session_id, count(*) as n from messages group by 1 order by 1",), {}),
    ]


def test_the_history_object_and_the_old_spellings_give_the_same_frames(run):
    forge = run.forge
    for name, args, kwargs in calls(run):
        through_data = getattr(forge.data, name)(*args, **kwargs)
        old_spelling = getattr(forge, name)(*args, **kwargs)
        direct = getattr(frames, name)(forge.store, *args, **kwargs)
        assert len(direct) > 0 or name == "compactions", name  # a comparison of something
        pd.testing.assert_frame_equal(through_data, old_spelling, obj=name)
        pd.testing.assert_frame_equal(through_data, direct, obj=name)


def test_every_history_method_is_forwarded_with_its_signature_and_docstring():
    public = {n for n, v in vars(HistoryData).items()
              if callable(v) and not n.startswith("_")}
    assert public == set(HistoryData.FORWARDED)
    for name in HistoryData.FORWARDED:
        mine, theirs = getattr(Forge, name), getattr(HistoryData, name)
        assert inspect.signature(mine) == inspect.signature(theirs), name
        assert mine.__doc__ == theirs.__doc__ and mine.__doc__, name


def test_a_forwarded_call_reads_rows_not_yet_flushed(fresh):
    forge = fresh("duckdb")
    forge.session("buffered")  # created through the store directly: already committed
    forge.announce(forge.session("later").id, "a notice, buffered in the projection")
    assert forge.projection.pending
    notices = forge.events(type="notice")
    assert list(notices["data"].astype(str).str.contains("buffered")) == [True]
