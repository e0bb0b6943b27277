"""The tool profile (issue 12, item 15): what the model reads before the person says anything.

``lean`` sends five builtins with short descriptions and a short system prompt; ``auto`` picks
it for models litellm knows to have a small window; every fact of the full table is said once.
Asserted on what the fake model server received, through real litellm.
"""

from __future__ import annotations

import json

import pytest

from forge_jupyter.config import Forge as ForgeConfig
from forge_jupyter.errors import InvalidOption
from forge_jupyter.testing import Turn, tool_call
from forge_jupyter.tools.profiles import LEAN

LEAN_TOOLS = sorted(set(LEAN) - {"apply_patch", "question"})  # edit, python, read, sql, variables
# (apply_patch: edit's counterpart for GPT-5-family models; question: only under its flag)
FULL_TOOLS = sorted(["python", "variables", "sql", "read", "list", "glob", "grep", "write",
                     "edit", "history", "task", "memory_search", "memory_get"])


def system_of(request) -> str:
    return request.messages[0]["content"]


def descriptions(request) -> dict[str, str]:
    return {t["function"]["name"]: t["function"]["description"] for t in request.body["tools"]}


def tokens(text: str) -> int:
    from forge_jupyter import llm

    return llm.count_tokens("gpt-4o", text=text)


def test_lean_sends_five_builtins_a_short_prompt_and_keeps_custom_tools(make_forge, server):
    server.add(Turn.text("ok"), Turn.text("ok"))
    lean = make_forge(builtin_tools=True, tool_profile="lean")

    @lean.tool
    def forecast(city: str) -> str:
        """Forecast for a city.

        city: the city's name
        """
        return "sunny"

    lean.session("s").prompt("hi")
    make_forge(builtin_tools=True, tool_profile="full").session("s").prompt("hi")
    lean_req, full_req = server.requests
    assert sorted(lean_req.tools) == sorted([*LEAN_TOOLS, "forecast"])
    assert sorted(full_req.tools) == FULL_TOOLS
    assert descriptions(lean_req)["forecast"] == "Forecast for a city."  # custom: as written
    full = descriptions(full_req)
    for name, short in descriptions(lean_req).items():
        if name in LEAN:
            assert short == LEAN[name] and len(short) < len(full[name])
    # no per-parameter prose in lean; the schema's shape (what is validated) is the same
    for tool in lean_req.body["tools"]:
        if tool["function"]["name"] in LEAN:
            props = tool["function"]["parameters"]["properties"]
            assert all("description" not in p for p in props.values())
    assert len(system_of(lean_req)) < 450
    assert tokens(json.dumps(lean_req.body["tools"]) + system_of(lean_req)) < 700
    # 2,300 before the two memory tools (issue 15), which add ~220 tokens
    assert tokens(json.dumps(full_req.body["tools"]) + system_of(full_req)) < 2_400


def test_lean_tools_validate_as_before_and_others_are_unknown(make_forge, server, tmp_path):
    (tmp_path / "notes.txt").write_text("alpha\nbeta\n")
    server.add(Turn([tool_call("read", {"path": "notes.txt", "offset": -1}),
                     tool_call("read", {"path": "notes.txt", "offset": 1}),
                     tool_call("write", {"path": "x.txt", "content": "no"})]),
               Turn.text("done"))
    forge = make_forge(builtin_tools=True, tool_profile="lean", root=tmp_path)
    answer = forge.session("s").prompt("read it")
    first = forge.session("s").messages()[1]
    bad, good, unknown = first.tool_parts
    assert bad.state == "error" and "offset" in bad.error and "minimum" in bad.error
    assert good.state == "completed" and "beta" in good.output and "alpha" not in good.output
    assert unknown.state == "error" and "Unknown tool 'write'" in unknown.error
    assert not (tmp_path / "x.txt").exists()
    assert answer.text == "done"


def test_auto_is_lean_for_a_model_litellm_knows_to_have_a_small_window(make_forge, server):
    server.add(Turn.text("ok"), Turn.text("ok"), Turn.text("ok"))
    for model in ("openai/gpt-4", "openai/gpt-4o", "openai/a-local-model"):  # 8k, 128k, unknown
        make_forge(builtin_tools=True, model=model).session("s").prompt("hi")
    small, large, unknown = server.requests
    assert sorted(small.tools) == LEAN_TOOLS
    assert sorted(large.tools) == FULL_TOOLS and sorted(unknown.tools) == FULL_TOOLS
    assert len(system_of(small)) < len(system_of(large))


def test_a_replay_decides_without_the_window_and_settles_the_table_if_it_goes_live(make_forge):
    """A replayed turn asks no model, so under ``auto`` it takes the full table without asking
    litellm the model's window (the import a replayed cell must not wait for); one that goes
    live after a divergence gets the table the setting picks, as a live turn would."""
    from types import SimpleNamespace

    from forge_jupyter.session.turn import decide, settle_tools

    forge = make_forge(builtin_tools=True, model="openai/gpt-4")  # 8k: auto is lean
    info = forge.session("s").info
    live = decide(forge, info)
    replayed = decide(forge, info, replaying=True)
    assert sorted(live.tools) == LEAN_TOOLS and sorted(replayed.tools) == FULL_TOOLS
    ctx = SimpleNamespace(session=info, agent=replayed.agent.name, model=replayed.model,
                          permissions=replayed.permissions, tools=replayed.tools,
                          system=replayed.system)
    settle_tools(forge, ctx)
    assert sorted(ctx.tools) == LEAN_TOOLS and ctx.system == live.system
    chosen = make_forge(builtin_tools=True, model="openai/gpt-4", tool_profile="lean")
    assert sorted(decide(chosen, chosen.session("s").info, replaying=True).tools) == LEAN_TOOLS


def test_a_custom_tool_named_like_a_builtin_is_kept_in_lean(make_forge, server):
    server.add(Turn.text("ok"))
    forge = make_forge(builtin_tools=True, tool_profile="lean")

    @forge.tool(name="write", mutating=True)
    def my_write(path: str) -> str:
        """My own writer."""
        return "written"

    forge.session("s").prompt("hi")
    tools = descriptions(server.requests[0])
    assert tools["write"] == "My own writer." and "list" not in tools


def test_the_full_prompt_says_each_fact_once(make_forge, server):
    server.add(Turn.text("ok"))
    make_forge(builtin_tools=True, tool_profile="full").session("s").prompt("hi")
    request = server.requests[0]
    system = system_of(request)
    assert "Your tools" not in system  # the tool table describes the tools, not the prompt
    assert system.count("2,000 lines") == 1 and system.count("root directory") == 1
    for tool in request.body["tools"]:
        fn = tool["function"]
        assert "2,000 lines or 50 KB" not in fn["description"]  # the prompt says it once
        assert "- path:" not in fn["description"]  # parameter docs live in the schema
        for prop in fn["parameters"]["properties"].values():
            doc = prop.get("description")
            if doc:
                assert doc not in fn["description"], (fn["name"], doc)


def test_without_file_tools_the_prompt_has_no_file_line(make_forge, server):
    server.add(Turn.text("ok"))
    make_forge().session("s").prompt("hi")  # builtins off
    assert "root directory" not in system_of(server.requests[0])


@pytest.mark.parametrize("value", ["tiny", "", None, 3, "lean lean"])
def test_an_unknown_profile_is_refused_with_the_choices(make_forge, value):
    with pytest.raises(InvalidOption, match="tool_profile must be one of auto, full, lean"):
        make_forge(tool_profile=value)


def test_the_profile_from_the_environment(monkeypatch, make_forge, server):
    monkeypatch.setenv("FORGE_TOOL_PROFILE", "lean")
    kwargs = ForgeConfig().forge_kwargs()
    assert kwargs["tool_profile"] == "lean"
    server.add(Turn.text("ok"))
    make_forge(builtin_tools=True, tool_profile=kwargs["tool_profile"]).session("s").prompt("hi")
    assert sorted(server.requests[0].tools) == LEAN_TOOLS
