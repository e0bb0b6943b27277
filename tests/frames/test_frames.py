"""The DataFrame API against what the store holds, on DuckDB and on the memory store."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime

import pandas as pd
import pytest

from forge_jupyter import frames
from forge_jupyter.errors import NotFound
from forge_jupyter.message import StepFinishPart, ToolPart
from forge_jupyter.session.view import load_view
from tests.frames.frames_helpers import PRICED, SLOW, SMALL, all_events, bodies, expected_costs

UTC_TIME = "datetime64[us, UTC]"


def all_frames(forge, session="alpha", *, empty: bool = False
               ) -> list[tuple[str, pd.DataFrame, dict[str, str]]]:
    """Every frame of the API with the dtypes it promises (``empty``: for a store holding
    only ``session``, itself empty)."""
    return [
        ("sessions", forge.sessions(since="2100-01-01" if empty else None), frames.SESSIONS),
        ("messages", forge.messages(), frames.MESSAGES),
        ("parts", forge.parts(), frames.PARTS),
        ("tool_calls", forge.tool_calls(), frames.TOOL_CALLS),
        ("compactions", forge.compactions(), frames.COMPACTIONS),
        ("context", forge.context(), frames.CONTEXT),
        ("turns", forge.turns(), frames.TURNS),
        ("events", forge.events(), frames.EVENTS),
        ("history", forge.history(session, include_superseded=True), frames.HISTORY),
        *[(f"costs(by={by})", forge.costs(by=by), frames.cost_spec(by))
          for by in frames.COST_KEYS],
    ]


def stamp(seconds: float) -> pd.Timestamp:
    """An epoch-seconds time as the store keeps it (microseconds, UTC)."""
    return pd.Timestamp(datetime.fromtimestamp(seconds, UTC))


def dtypes(frame: pd.DataFrame) -> dict[str, str]:
    return {c: str(t) for c, t in frame.dtypes.items()}


def promised(spec: dict[str, str]) -> dict[str, str]:
    return {c: str(pd.Series([], dtype=t).dtype) for c, t in spec.items()}


# ------------------------------------------------------------------------------ costs


@pytest.mark.parametrize("by", ["session", "day", "model", "agent", "cell"])
def test_costs_equal_the_sums_of_the_stored_step_finish_parts(run, by):
    frame = run.forge.costs(by=by)
    keys = [name for _, name, _ in frames.COST_KEYS[by]]
    got = {}
    for row in frame.itertuples(index=False):
        r = row._asdict()
        key = tuple(None if pd.isna(r[k]) else r[k] for k in keys)
        if by == "day":
            key = (r["day"].date(),)
        got[key] = (r["steps"], r["tokens_input"], r["tokens_output"], r["tokens_reasoning"],
                    r["tokens_cache_read"], r["tokens_cache_write"], r["cost"],
                    r["unpriced_steps"])
    expected = expected_costs(run.forge.store, by)
    assert got.keys() == expected.keys()
    for key, want in expected.items():
        assert got[key][:6] == want[:6], key
        assert got[key][7] == want[7], key
        if want[7] == want[0]:  # every step unpriced: the cost is unknown, not zero
            assert math.isnan(got[key][6]), key
        else:
            assert got[key][6] == pytest.approx(want[6], rel=1e-12), key


def test_session_totals_are_the_step_sums_of_what_each_session_wrote(run):
    sessions = run.forge.sessions().set_index("session_id")
    expected = expected_costs(run.forge.store, "session")
    assert set(sessions.name) == {"alpha", "beta", "gamma", "alpha-fork"}
    for (sid, name), (steps, tokens_in, tokens_out, *_rest, cost, unpriced) in expected.items():
        row = sessions.loc[sid]
        assert (row["name"], row.steps, row.tokens_input, row.tokens_output) == (
            name, steps, tokens_in, tokens_out)
        assert math.isnan(row.cost) if unpriced == steps else row.cost == pytest.approx(cost)
    assert sessions.loc[run.sessions["fork"].id].messages == len(
        list(run.forge.store.iter_timeline(run.sessions["fork"].id)))


def test_costs_are_real_numbers_from_the_price_table_and_nan_where_unknown(run):
    by_model = run.forge.costs(by="model").set_index("model")
    assert by_model.loc[PRICED, "cost"] > 0 and by_model.loc[SMALL, "cost"] > 0
    assert math.isnan(by_model.loc["openai/fake-model", "cost"])
    assert by_model.loc["openai/fake-model", "unpriced_steps"] == 1


def test_costs_by_cell_follow_the_prompting_cell_and_group_by_several_keys(run):
    cells = run.forge.costs(by="cell")
    alpha_cells = cells[cells.cell_id.isin(["cell-1", "cell-2", "cell-3"])]
    assert alpha_cells.notebook.unique().tolist() == ["analysis.ipynb"]
    assert alpha_cells.set_index("cell_id").steps.to_dict() == {
        "cell-1": 2, "cell-2": 2, "cell-3": 1}
    both = run.forge.costs(by=["day", "model"])
    assert list(both.columns[:2]) == ["day", "model"]
    assert both.steps.sum() == run.forge.costs(by="day").steps.sum()
    assert both.cost.sum() == pytest.approx(run.forge.costs(by="model").cost.sum())


def test_costs_filters(run):
    alpha = run.sessions["alpha"]
    only = run.forge.costs(by="session", session="alpha")
    assert only.session_id.tolist() == [alpha.id] and only.name.tolist() == ["alpha"]
    assert run.forge.costs(by="model", model=SMALL).model.tolist() == [SMALL]
    assert run.forge.costs(by="day", since="2100-01-01").empty
    with pytest.raises(ValueError, match="session, day, model, agent, cell"):
        run.forge.costs(by="week")


# ------------------------------------------------------------------------------ rows


def test_messages_are_the_stored_bodies(run):
    stored = bodies(run.forge.store)
    frame = run.forge.messages().set_index("message_id")
    assert set(frame.index) == set(stored)
    for mid, m in stored.items():
        row = frame.loc[mid]
        assert (row.session_id, row.role, row.status, row.summary) == (
            m.session_id, m.role, m.status, m.summary)
        assert (row.tokens_input, row.tokens_output) == (m.tokens.input, m.tokens.output)
        assert row.created_at == stamp(m.created_at)
    failed = run.forge.messages("gamma", role="assistant")
    assert failed.status.tolist() == ["completed", "error"]
    assert failed.error_type.iloc[1] == "BadRequestError"
    prompts = run.forge.messages("alpha", role="user")
    assert prompts.cell_id.dropna().tolist() == ["cell-1", "cell-2", "cell-3"]
    assert prompts.execution_count.dropna().tolist() == [1, 2, 3]


def test_messages_and_parts_filter_by_time_session_and_type(run):
    beta_first = run.forge.messages("beta").created_at.min()
    later = run.forge.messages(since=beta_first)
    earlier = run.forge.messages(until=beta_first)
    assert len(later) + len(earlier) == len(run.forge.messages())
    assert (later.created_at >= beta_first).all() and (earlier.created_at < beta_first).all()
    assert set(run.forge.messages(model=SMALL).session_id) == {run.sessions["beta"].id}
    steps = run.forge.parts(type="step-finish")
    assert set(steps.type) == {"step-finish"}
    assert len(steps) == sum(isinstance(p, StepFinishPart)
                             for m in bodies(run.forge.store).values() for p in m.parts)
    both = run.forge.parts("alpha", type=["text", "tool"])
    assert set(both.type) == {"text", "tool"} and set(both.session_id) == {run.sessions["alpha"].id}
    text = both[both.type == "text"].text.tolist()
    assert "What is 2+3? Also try boom." in text
    with pytest.raises(NotFound):
        run.forge.parts("no-such-session")


def test_tool_calls_carry_state_duration_sizes_and_errors(run):
    calls = run.forge.tool_calls().set_index("part_id")
    stored = {p.id: p for m in bodies(run.forge.store).values() for p in m.parts
              if isinstance(p, ToolPart)}
    assert set(calls.index) == set(stored)
    for pid, p in stored.items():
        row = calls.loc[pid]
        assert (row.tool, row.state, row.call_id) == (p.tool, p.state, p.call_id)
        assert row.duration_s == pytest.approx(p.time_end - p.time_start, abs=2e-6)
        assert row.input_bytes == len(json.dumps(p.input, separators=(",", ":")).encode())
        assert json.loads(row.input) == p.input
        if p.state == "error":
            assert row.error == p.error and pd.isna(row.output_bytes)
        else:
            assert pd.isna(row.error) and row.output_bytes == len(p.output.encode())
    assert calls[calls.tool == "slow"].duration_s.min() >= SLOW
    failed = run.forge.tool_calls(state="error")
    assert failed.tool.tolist() == ["boom", "boom"]
    assert failed.error.str.startswith("RuntimeError: boom").all()
    assert run.forge.tool_calls("beta", tool="boom").model.tolist() == [SMALL]


def test_compactions_match_the_compaction_events(run):
    frame = run.forge.compactions().set_index("event_id")
    events = all_events(run.forge.store, type="compaction")
    assert set(frame.index) == {e.id for e in events} and len(events) == 2
    for e in events:
        row = frame.loc[e.id]
        assert row.session_id == e.session_id
        assert (row.auto, row.reason, row.extractive) == (
            e.data["auto"], e.data["reason"], e.data["extractive"])
        assert (row.tokens_before, row.tokens_after) == (
            e.data["tokens_before"], e.data["tokens_after"])
        assert (row.request_message_id, row.summary_message_id, row.tail_start) == (
            e.data["request_message_id"], e.data["summary_message_id"], e.data["tail_start"])
        assert row.boundary_pos == run.forge.store.position(e.session_id,
                                                            e.data["request_message_id"])
        assert row.created_at == stamp(e.created_at)
    by_session = frame.set_index("session_id")
    assert not by_session.loc[run.sessions["alpha"].id].auto
    assert by_session.loc[run.sessions["beta"].id].auto
    assert by_session.loc[run.sessions["beta"].id].reason == "context overflow"


@pytest.mark.parametrize("name", ["alpha", "beta", "gamma", "fork"])
def test_superseded_messages_appear_only_with_include_superseded(run, name):
    session = run.sessions[name]
    store = run.forge.store
    view, start = load_view(store, session.id)
    everything = list(store.iter_timeline(session.id))
    visible = run.forge.history(session)
    full = run.forge.history(session, include_superseded=True)
    assert visible.message_id.tolist() == [m.id for m in view]
    assert visible.pos.tolist() == list(range(start, len(everything)))
    assert visible.visible_to_model.all()
    assert full.message_id.tolist() == [m.id for m in everything]
    assert full.visible_to_model.tolist() == [pos >= start for pos in range(len(everything))]
    assert full.text.fillna("").tolist() == [m.text for m in everything]
    assert full.tool_calls.tolist() == [len(m.tool_parts) for m in everything]
    if name in ("alpha", "beta", "fork"):
        assert start > 0 and not full.visible_to_model.iloc[0]  # a compaction superseded some
        assert full.is_boundary.sum() == 1
    else:
        assert start == 0


def test_context_has_one_row_per_model_call_with_the_boundary_in_force(run):
    store = run.forge.store
    for name in ("alpha", "beta", "fork"):
        session = run.sessions[name]
        timeline = list(store.iter_timeline(session.id))
        expected = [(pos, p.id, p.tokens.input, m.summary)
                    for pos, m in enumerate(timeline) for p in m.parts
                    if isinstance(p, StepFinishPart)]
        ctx = run.forge.context(session)
        assert list(zip(ctx.pos, ctx.part_id, ctx.tokens_input, ctx.summarizing,
                        strict=True)) == expected
        assert ctx.step.tolist() == list(range(1, len(expected) + 1))
        # before the summary is written no boundary is in force; after it, one is
        summary_pos = next(pos for pos, m in enumerate(timeline) if m.summary)
        assert (ctx[ctx.pos <= summary_pos].compactions == 0).all()
        after = ctx[ctx.pos > summary_pos]
        assert not after.empty and (after.compactions == 1).all()
        request = timeline[summary_pos].parent_id
        assert (after.compaction_pos == store.position(session.id, request)).all()
        assert (after.view_start == load_view(store, session.id)[1]).all()


def test_turns_sum_what_answering_each_prompt_took(run):
    turns = run.forge.turns("alpha").set_index("cell_id")
    first = turns.loc["cell-1"]
    assert (first.kind, first.steps, first.tool_calls, first.tool_errors) == ("prompt", 2, 2, 1)
    assert first.tokens_input == 120 + 180 and first.status == "completed"
    kinds = run.forge.turns("beta").kind.tolist()
    assert kinds.count("compaction") == 1 and kinds.count("synthetic") == 1


def test_events_frame(run):
    frame = run.forge.events()
    stored = all_events(run.forge.store)
    assert frame.event_id.tolist() == sorted(e.id for e in stored)
    fork = run.forge.events("alpha-fork", type="fork")
    assert len(fork) == 1 and json.loads(fork.data.iloc[0])["from_session"] == run.sessions[
        "alpha"].id


# ------------------------------------------------------------------------------ shapes


def test_every_frame_has_the_promised_dtypes(run):
    for name, frame, spec in all_frames(run.forge):
        assert list(frame.columns) == list(spec), name
        assert dtypes(frame) == promised(spec), name
        assert not frame.empty, name
        for column, dtype in spec.items():
            if dtype == UTC_TIME:
                assert str(frame[column].dt.tz) == "UTC", (name, column)


@pytest.mark.parametrize("kind", ["memory", "duckdb"])
def test_empty_results_have_the_columns_and_dtypes(run, fresh, kind):
    filtered = {
        "sessions": (run.forge.sessions(since="2100-01-01"), frames.SESSIONS),
        "messages": (run.forge.messages(since="2100-01-01"), frames.MESSAGES),
        "tool_calls": (run.forge.tool_calls(tool="no-such-tool"), frames.TOOL_CALLS),
        "compactions": (run.forge.compactions("gamma"), frames.COMPACTIONS),
    }
    forge = fresh(kind)
    for name, frame, spec in [*((n, f, s) for n, (f, s) in filtered.items()),
                              *all_frames(forge, forge.session("empty"), empty=True)]:
        assert frame.empty, name
        assert list(frame.columns) == list(spec), name
        assert dtypes(frame) == promised(spec), name


# ------------------------------------------------------------------------------ tenants


def test_a_tenant_sees_only_its_own_rows(run):
    mine = {s.id for n, s in run.sessions.items() if n != "theirs"}
    theirs = run.sessions["theirs"].id
    for name, frame, _ in all_frames(run.forge):
        if "session_id" in frame:
            assert set(frame.session_id.dropna()) <= mine, name
    assert set(run.other.sessions().session_id) == {theirs}
    assert set(run.other.messages().session_id) == {theirs}
    assert run.other.tool_calls().tool.tolist() == ["add"]
    assert run.other.costs(by="session").steps.tolist() == [2]
    assert run.other.compactions().empty and run.other.context().session_id.unique().tolist() == [
        theirs]
    for view in ("sessions", "messages", "parts", "tool_calls", "costs", "turns", "timeline",
                 "context", "compactions", "events"):
        seen = set(run.forge.sql(f"SELECT DISTINCT session_id FROM {view}").session_id.dropna())
        assert theirs not in seen and seen <= mine, view
        assert set(run.forge.sql(f"SELECT DISTINCT tenant_id FROM {view}").tenant_id) <= {
            "default"}, view
    with pytest.raises(NotFound):
        run.forge.history(theirs)


def test_history_reads_a_prompt_as_the_person_wrote_it_without_the_harness_note(make_forge, fake_model_server):
    """The notebook's context note rides on the person's prompt as a synthetic part: the model
    reads it, the history's text is what the person typed (on DuckDB, through the real SQL)."""
    import asyncio

    from forge_jupyter.session.prompt import prompt_async
    from forge_jupyter.testing import Turn

    server = fake_model_server  # the one make_forge talks to (this folder's `server` is another)
    server.add(Turn.text("Paris."))
    forge = make_forge(db="duckdb")
    session = forge.session("noted")
    note = "[Notebook context: sales.ipynb, 12 cells; this prompt is cell #3]"
    asyncio.run(prompt_async(session, "Capital of France?", context=note))
    texts = forge.history(session).text.tolist()
    assert texts == ["Capital of France?", "Paris."]
    sent = json.dumps(server.requests[-1].body)
    assert "Capital of France?" in sent and "sales.ipynb, 12 cells" in sent
