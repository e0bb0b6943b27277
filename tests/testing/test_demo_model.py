"""The offline demo model, through the real path: the demo server over loopback HTTP, real
litellm, a Forge with a DuckDB file and the builtin tools over a DataFrame in its namespace.

Every answer must carry a number computed from the test's own DataFrame, come from a completed
`sql`/`python` call stored in the session, and say that it is the offline demo.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterator
from typing import Any

import pandas as pd
import pytest

from forge_jupyter.forge import Forge
from forge_jupyter.message import Message, ToolPart
from forge_jupyter.testing import DEMO_ANNOUNCEMENT, FakeModelServer

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

PROVIDER_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "MISTRAL_API_KEY",
                 "DEEPSEEK_API_KEY", "GROQ_API_KEY", "OPENROUTER_API_KEY", "XAI_API_KEY",
                 "FORGE_MODEL", "FORGE_API_BASE", "FORGE_API_KEY")


@pytest.fixture
def weather() -> pd.DataFrame:
    # Awkward names on purpose: a space, quotes of both kinds — the SQL must quote them.
    return pd.DataFrame({
        "city": ["Oslo", "Lima", "Oslo", "Pune", None, "Lima", "Oslo", "Pune"],
        "temp c": [3.5, 19.0, None, 31.25, 12.0, 18.5, -1.0, None],
        "visits": [10, 4, 7, 12, 3, 9, 5, 8],
        'tag "it\'s"': ["a", "b", None, "a", "a", "b", "c", "a"],
    })


@pytest.fixture
def no_keys(monkeypatch) -> None:
    """No provider key and no configured model: the fallback picks the offline demo."""
    for key in PROVIDER_KEYS:
        monkeypatch.delenv(key, raising=False)


@pytest.fixture(scope="module")
def server() -> Iterator[FakeModelServer]:
    with FakeModelServer.demo() as s:
        yield s


@pytest.fixture
def forge(tmp_path, server, weather) -> Iterator[Forge]:
    with Forge(db=str(tmp_path / "demo.duckdb"), model="openai/forge-demo-test",
               api_base=server.openai_base, api_key="sk-demo-test", root=str(tmp_path),
               namespace={"weather": weather, "n": 3}) as f:
        yield f


def ask(forge: Forge, question: str, session: Any = None, **options: Any) -> tuple[Message, list[ToolPart]]:
    """Prompt, then read the turn's tool parts back from the store."""
    session = session or forge.session(new=True)
    answer = session.prompt(question, **options)
    tools = [p for m in session.messages() if m.role == "assistant" and m.parent_id == answer.parent_id
             for p in m.parts if isinstance(p, ToolPart)]
    return answer, tools


def numbers(text: str) -> list[float]:
    return [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", text.replace(",", ""))]


def bold_number(text: str) -> float:
    """The number the answer puts in bold: the answer itself."""
    found = re.search(r"\*\*(-?[\d.,]+)\*\*", text)
    assert found, text
    return float(found[1].replace(",", ""))


def leader(text: str) -> tuple[str, float]:
    """The group an answer names first and the number it gives it: "`Oslo` with **22.0**"."""
    found = re.search(r"`([^`]+)` (?:is highest )?with \*\*(-?[\d.,]+)\*\*", text)
    assert found, text
    return found[1], float(found[2].replace(",", ""))


def computed_by(tools: list[ToolPart], tool: str) -> ToolPart:
    (call,) = [t for t in tools if t.tool in ("sql", "python")]
    assert call.tool == tool and call.state == "completed", (call.state, call.error)
    return call


def assert_demo_answer(answer: Message) -> None:
    assert answer.status == "completed"
    assert answer.text.startswith(DEMO_ANNOUNCEMENT)
    assert "OPENAI_API_KEY" in answer.text  # how to use a real model


# -- each kind of question ---------------------------------------------------------------------


def test_missing_values_per_column_are_counted_with_sql(forge, weather):
    answer, tools = ask(forge, "Which columns of `weather` have missing values, and how many?")
    assert_demo_answer(answer)
    assert [t.tool for t in tools] == ["variables", "sql"]
    call = computed_by(tools, "sql")
    for column, missing in weather.isna().sum().items():
        line = next(ln for ln in call.output.splitlines() if ln.strip().startswith(column))
        assert line.split()[-1] == str(missing)  # the stored result holds the true count
        if missing:
            assert f"has **{missing}**" in answer.text and column in answer.text
    assert "`visits` has none" in answer.text


def test_rows_and_columns_are_counted(forge, weather):
    answer, tools = ask(forge, "How many rows and columns does `weather` have?")
    assert_demo_answer(answer)
    computed_by(tools, "sql")
    assert f"{len(weather)} rows and {weather.shape[1]} columns" in answer.text


def test_column_names_and_types_come_from_the_query(forge, weather):
    answer, tools = ask(forge, "What columns does `weather` have, and what types?")
    assert_demo_answer(answer)
    call = computed_by(tools, "sql")
    assert "DESCRIBE" in call.input["query"]
    for column in weather.columns:
        assert column in answer.text
    assert "(DOUBLE)" in answer.text and "(BIGINT)" in answer.text


@pytest.mark.parametrize(("question", "expected"), [
    ("What is the average temp c in `weather`?", lambda df: df["temp c"].mean()),
    ("What is the maximum number of visits in `weather`?", lambda df: df["visits"].max()),
    ("What is the minimum temp c in `weather`?", lambda df: df["temp c"].min()),
    ("What are the total visits in `weather`?", lambda df: df["visits"].sum()),
    ("What is the median temp c of `weather`?", lambda df: df["temp c"].median()),
])
def test_an_aggregate_of_a_column_is_computed(forge, weather, question, expected):
    answer, tools = ask(forge, question)
    assert_demo_answer(answer)
    computed_by(tools, "sql")
    assert math.isclose(bold_number(answer.text), float(expected(weather)), rel_tol=1e-6)


def test_which_group_is_highest_ranks_groups_by_their_total(forge, weather):
    answer, tools = ask(forge, "Which city had the highest visits in `weather`?")
    assert_demo_answer(answer)
    computed_by(tools, "sql")
    totals = weather.groupby("city")["visits"].sum().sort_values(ascending=False)
    assert leader(answer.text) == (totals.index[0], totals.iloc[0])


def test_top_n_rows_by_a_column(forge, weather):
    answer, tools = ask(forge, "Show the top 3 rows of `weather` by visits.")
    assert_demo_answer(answer)
    call = computed_by(tools, "sql")
    assert "LIMIT 3" in call.input["query"]
    top = weather.nlargest(3, "visits")["visits"].tolist()
    said = answer.text.split("have `visits`", 1)[1].split(":", 1)[0]
    assert numbers(said) == [float(v) for v in top]


def test_value_counts_of_a_column(forge, weather):
    answer, tools = ask(forge, "What are the value counts of city in `weather`?")
    assert_demo_answer(answer)
    computed_by(tools, "sql")
    counts = weather["city"].value_counts(dropna=False)
    assert f"{len(counts)} distinct values" in answer.text
    assert f"`{counts.index[0]}` ({counts.iloc[0]} rows)" in answer.text


def test_describe_summarizes_the_numeric_columns(forge, weather):
    answer, tools = ask(forge, "Describe `weather`.")
    assert_demo_answer(answer)
    computed_by(tools, "sql")
    for column in ("temp c", "visits"):
        mean = weather[column].mean()
        said = answer.text.split(f"`{column}`:", 1)[1]
        assert math.isclose(bold_number(said), mean, rel_tol=1e-6)


def test_a_chart_is_drawn_with_python_after_an_approval(forge, weather):
    asked = []
    forge.on_approval(lambda request: asked.append(request) or "once")
    answer, tools = ask(forge, "Plot visits by city for `weather`.")
    assert_demo_answer(answer)
    call = computed_by(tools, "python")
    assert [r.tool for r in asked] == ["python"] and asked[0].subject == call.input["code"]
    assert "image/png" in call.output
    totals = weather.groupby("city")["visits"].sum().sort_values(ascending=False)
    assert leader(answer.text) == (totals.index[0], totals.iloc[0])


def test_a_denied_python_call_is_reported_not_papered_over(forge):
    # A plain script: no approval handler, so the ask is denied at once.
    answer, tools = ask(forge, "Plot visits by city for `weather`.")
    assert_demo_answer(answer)
    (call,) = [t for t in tools if t.tool == "python"]
    assert call.state == "error" and "Permission denied" in call.error
    assert "did not go through" in answer.text and "approval" in answer.text


def test_without_python_the_plan_agent_gets_the_numbers_instead_of_a_chart(forge, weather):
    answer, tools = ask(forge, "Plot visits by city for `weather`.", agent="plan")
    assert_demo_answer(answer)
    computed_by(tools, "sql")
    assert "`python` is not offered" in answer.text
    assert leader(answer.text)[1] == weather.groupby("city")["visits"].sum().max()


# -- finding the DataFrame -----------------------------------------------------------------


def test_an_unnamed_frame_is_found_by_listing_the_variables(forge, weather):
    answer, tools = ask(forge, "How many rows are there?")
    assert_demo_answer(answer)
    assert [(t.tool, t.input) for t in tools[:2]] == [("variables", {}), ("variables", {"name": "weather"})]
    computed_by(tools, "sql")
    assert f"{len(weather)} rows" in answer.text


def test_a_follow_up_reuses_the_frame_it_already_knows(forge, weather):
    session = forge.session(new=True)
    ask(forge, "Which columns of `weather` have missing values?", session)
    answer, tools = ask(forge, "Which city had the lowest visits?", session)
    assert [t.tool for t in tools] == ["sql"]
    totals = weather.groupby("city")["visits"].sum().sort_values()
    assert leader(answer.text) == (totals.index[0], totals.iloc[0])


def test_several_frames_and_none_named_is_a_question_back_not_a_guess(tmp_path, server, weather):
    with Forge(db=str(tmp_path / "two.duckdb"), model="openai/forge-demo-test",
               api_base=server.openai_base, api_key="sk-demo-test",
               namespace={"weather": weather, "other": weather.head(2)}) as forge:
        answer, tools = ask(forge, "How many rows are there?")
    assert_demo_answer(answer)
    assert [t.tool for t in tools] == ["variables"]
    assert "`other`" in answer.text and "`weather`" in answer.text and "backticks" in answer.text


def test_a_name_that_is_no_dataframe_is_said_so(forge):
    answer, tools = ask(forge, "How many rows does `n` have?")
    assert_demo_answer(answer)
    assert "`n` is not a DataFrame" in answer.text
    computed_by(tools, "sql")  # then it worked on the one DataFrame there is


def test_an_unknown_question_gets_an_honest_list_of_what_the_demo_can_do(forge):
    answer, tools = ask(forge, "Write me a poem about spring.")
    assert_demo_answer(answer)
    assert tools == []
    assert "Write me a poem about spring." in answer.text and "I have no rule for that" in answer.text
    assert "missing values per column" in answer.text


def test_the_same_question_gets_the_same_calls_and_answer(forge):
    first, first_tools = ask(forge, "Which city had the highest visits in `weather`?")
    second, second_tools = ask(forge, "Which city had the highest visits in `weather`?")
    assert first.text == second.text
    assert [(t.tool, t.input) for t in first_tools] == [(t.tool, t.input) for t in second_tools]


# -- other routes -----------------------------------------------------------------------------


def test_the_anthropic_route_reads_tool_results_too(tmp_path, server, weather):
    with Forge(db=str(tmp_path / "a.duckdb"), model="anthropic/claude-sonnet-4-5",
               api_base=server.anthropic_base, api_key="sk-demo-test",
               namespace={"weather": weather}) as forge:
        answer, tools = ask(forge, "Which columns of `weather` have missing values?")
    assert_demo_answer(answer)
    computed_by(tools, "sql")
    assert f"has **{weather['temp c'].isna().sum()}**" in answer.text


def test_with_no_key_a_forge_falls_back_to_the_demo_and_it_answers_from_sql(tmp_path, weather, no_keys):
    with Forge(db=str(tmp_path / "default.duckdb"), namespace={"weather": weather}) as forge:
        answer, tools = ask(forge, "How many rows does `weather` have?")
    assert answer.model and "forge-demo" in answer.model
    assert_demo_answer(answer)
    computed_by(tools, "sql")
    assert f"{len(weather)} rows" in answer.text


def test_the_demo_says_what_it_is_once_a_turn_in_its_answer_not_in_every_step(forge, weather):
    session = forge.session(new=True)
    answer = session.prompt("Which columns of `weather` have missing values?")
    turn = [m for m in session.messages() if m.role == "assistant" and m.parent_id == answer.parent_id]
    assert len(turn) == 3  # variables, sql, the answer
    texts = [m.text for m in turn]
    assert sum(t.count(DEMO_ANNOUNCEMENT) for t in texts) == 1, texts
    assert answer.text.startswith(DEMO_ANNOUNCEMENT)


def test_the_demo_is_free_not_of_unknown_cost(tmp_path, weather, no_keys):
    with Forge(db=str(tmp_path / "default.duckdb"), namespace={"weather": weather}) as forge:
        answer, _ = ask(forge, "How many rows does `weather` have?")
        costs = forge.costs()
    assert answer.model == "openai/forge-demo"
    assert answer.cost == 0.0  # not None, which every view shows as "cost unknown"
    [row] = costs.to_dict("records")
    assert row["cost"] == 0.0 and row["unpriced_steps"] == 0


def test_python_m_forge_jupyter_demo_runs_a_scripted_session(tmp_path, no_keys, capsys):
    from forge_jupyter.__main__ import main

    assert main(["demo", "--db", str(tmp_path / "script.duckdb")]) == 0
    out = capsys.readouterr().out
    assert "`amount` has **1**" in out and "`status` has **1**" in out  # the script's frame
    assert "`bob` with **58.0" in out  # 40.0 + 18.0
    assert "python asks for approval" in out and "tool:python:completed" in out
