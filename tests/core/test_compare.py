"""forge.compare: one prompt, several models, each in its own fork — real litellm against the
fake model server (which answers by the model each request names), a real DuckDB file."""

from __future__ import annotations

import pytest

from forge_jupyter.errors import ForgeError
from forge_jupyter.testing import Turn, tool_call


def by_model(request):
    """Two models answering differently, one failing (400: not retried)."""
    model = request.body.get("model", "")
    if model == "broken":
        return Turn.error(400, "fake provider: model 'broken' does not exist")
    if model == "model-b" and not any(m.get("role") == "tool" for m in request.body["messages"]):
        return Turn([tool_call("read", {"path": "notes.txt"})])
    return Turn.text(f"{model} says the mean is 4.2")


def test_each_model_answers_in_its_own_fork_and_the_session_is_untouched(
        make_forge, fake_model_server, tmp_path):
    forge = make_forge("duckdb", builtin_tools=True, root=str(tmp_path))
    (tmp_path / "notes.txt").write_text("mean 4.2\n")
    session = forge.session("analysis")
    fake_model_server.add(Turn.text("Loaded."))
    session.prompt("Load the data.")
    before = [m.id for m in session.messages()]
    fake_model_server.add(*[by_model] * 6)

    result = forge.compare("What is the mean?", ["openai/model-a", "openai/model-b",
                                                 "openai/broken"], session=session)

    assert list(result["model"]) == ["openai/model-a", "openai/model-b", "openai/broken"]
    a, b, broken = result.to_dict("records")
    assert a["answer"] == "model-a says the mean is 4.2" and a["status"] == "completed"
    assert b["answer"] == "model-b says the mean is 4.2" and b["tool_calls"] == 1
    assert b["steps"] == 2 and a["steps"] == 1
    assert broken["status"] == "error" and "does not exist" in broken["error"]
    assert a["tokens_in"] > 0 and a["latency_s"] >= a["first_token_s"] >= 0
    # the compared session is untouched; each fork holds the history up to it, then its run
    assert [m.id for m in session.messages()] == before
    for row in (a, b, broken):
        fork = forge.session(row["session_id"])
        assert fork.id != session.id
        msgs = fork.messages()
        assert [m.id for m in msgs[: len(before)]] == before
        assert fork.info.metadata["compare"]["from"] == session.id
    # every request of a run carried the earlier history
    asked = [r.body for r in fake_model_server.requests[1:]]
    assert all(any("Load the data." in str(m.get("content")) for m in body["messages"])
               for body in asked)
    # going on in a fork
    chosen = result.use("openai/model-a")
    assert chosen.id == a["session_id"]
    assert type(result.sort_values("model")).__name__ == "DataFrame"


def test_the_runs_get_the_read_only_tool_set_and_are_told(make_forge, fake_model_server, tmp_path):
    forge = make_forge("duckdb", builtin_tools=True, root=str(tmp_path))
    fake_model_server.add(Turn.text("a"), Turn.text("b"))
    forge.compare("Tidy the folder.", "openai/model-a,openai/model-b")
    for request in fake_model_server.requests:
        offered = {t["function"]["name"] for t in request.body.get("tools", [])}
        assert "read" in offered and not offered & {"write", "edit", "python", "bash"}
        assert "side-by-side comparison" in str(request.body["messages"])


def test_one_budget_covers_the_whole_comparison(make_forge, fake_model_server):
    forge = make_forge("duckdb")
    fake_model_server.add(*[Turn.text("fine")] * 4)
    result = forge.compare("Hi", ["openai/gpt-4o-mini", "openai/gpt-4o"], budget=0.5,
                           concurrency=1)
    assert set(result["status"]) == {"completed"}
    assert result["cost"].sum() < 0.5


@pytest.mark.parametrize("models", [[], "", ",,", ["m"] * 0, [f"openai/m{i}" for i in range(9)]])
def test_bad_model_lists_are_refused_before_anything_runs(make_forge, fake_model_server, models):
    forge = make_forge("duckdb")
    with pytest.raises(ForgeError, match="1 to 8 models"):
        forge.compare("Hi", models)
    assert fake_model_server.requests == []


def test_a_bad_budget_or_concurrency_is_refused(make_forge, fake_model_server):
    forge = make_forge("duckdb")
    for bad in ({"budget": -1}, {"concurrency": 0}, {"max_tokens": "many"}):
        with pytest.raises(ForgeError):
            forge.compare("Hi", ["openai/a", "openai/b"], **bad)
    assert fake_model_server.requests == []


def test_answers_are_text_in_the_side_by_side_view(make_forge, fake_model_server):
    forge = make_forge("duckdb")
    fake_model_server.add(Turn.text("<script>alert(1)</script><img src=x onerror=alert(2)>"),
                          Turn.text("plain"))
    result = forge.compare("Hi", ["openai/a", "openai/b"], concurrency=1)
    page = result._repr_html_()
    assert "<script>alert" not in page and "<img" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "%forge use ses_…" in page
