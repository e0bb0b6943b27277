"""Permission rules never pattern-match code: a code tool's rule is whole-tool or exact, and a
wildcard over code is refused where the rule is configured (issue 24, class 2)."""

from __future__ import annotations

import pytest

from forge_jupyter.agents import Agent
from forge_jupyter.errors import InvalidOption
from forge_jupyter.testing import Turn, tool_call
from forge_jupyter.tools.base import Tool
from forge_jupyter.tools.permission import CodePatternRefused, Permissions, Rule

# What the README used to suggest, and spellings it did not: a prefix, a bare wildcard, a
# wildcard inside, one character, bracket globs, a suffix, a double star inside.
REFUSED = ["python:df.head*=allow", "python:df.*()=allow", "python:?=ask", "python:[a-z]*=allow",
           "python:df.hea[d]()=allow", "python:*head()=deny", "python:df.**=allow",
           "sql:SELECT*=allow", "shell:git *=allow", "python:df[!x]=allow"]


@pytest.mark.parametrize("rule", REFUSED)
def test_a_wildcard_over_code_is_refused_where_the_rule_is_made(rule):
    with pytest.raises(CodePatternRefused, match=r"argument is code.*Write \w+=(allow|ask|deny)"):
        Rule.parse(rule)


def test_refused_in_every_place_rules_enter(make_forge, server):
    with pytest.raises(InvalidOption, match="python=allow for every call"):
        make_forge(permissions=["python:df.head*=allow"])
    with pytest.raises(InvalidOption, match="argument is code"):
        Agent.from_config("fast", {"permissions": ["python:df.*=allow"]})
    with pytest.raises(InvalidOption, match="argument is code"):
        Rule("python", "print(*)", "allow")
    forge = make_forge()
    with pytest.raises(InvalidOption, match="argument is code"):
        forge.session("s").prompt("hi", permissions=["python:x*=allow"])
    assert server.requests == []  # refused before the model was asked anything


def test_whole_tool_and_exact_rules_are_accepted():
    for rule in ("python=allow", "python:*=ask", "python:**=deny", "python:df.head()=allow",
                 "python:df[[]0][*]2=allow", "*:data/*=deny", "write:data/*=allow"):
        Rule.parse(rule)
    p = Permissions([("agent", [Rule("python", "*", "ask"), Rule("python", "df.head()", "allow")])])
    assert p.evaluate("python", "df.head()").action == "allow"
    assert p.evaluate("python", "  df.head()\r\n").action == "allow"  # normalized: line ends, space
    for attack in ("df.head()\nopen('x').read()", "df.head(); import os",
                   "df.head(__import__('os').system('id'))", "df.head()#\nx=1"):
        assert p.evaluate("python", attack).action == "ask"
    escaped = Permissions([("agent", [Rule("python", "*", "ask"), Rule("python", "a[[]0][*]2", "allow")])])
    assert escaped.evaluate("python", "a[0]*2").action == "allow"
    assert escaped.evaluate("python", "a[0]*2; x").action == "ask"


def test_a_tool_wildcard_never_applies_a_pattern_to_code():
    p = Permissions([("agent", [Rule("*", "*", "ask"), Rule("*", "df*", "allow"),
                                Rule("py*", "df.head*", "allow")])])
    assert p.evaluate("python", "df.head(); import os").action == "ask"
    assert p.evaluate("look", "df_summary").action == "allow"  # not code: the pattern holds


def test_custom_and_mcp_shaped_tools_declared_as_code(make_forge, server):
    forge = make_forge()

    @forge.tool(argument="code")
    def evaluate(expression: str) -> str:
        """Evaluate an expression."""
        return expression

    with pytest.raises(CodePatternRefused):
        Rule.parse("evaluate:1+*=allow")

    @forge.tool
    def run_command(command: str) -> str:  # named like code: judged as code from its schema
        """Run a command."""
        return command

    with pytest.raises(CodePatternRefused):
        Rule.parse("run_command:ls *=allow")
    # an MCP tool is built from the server's schema the same way (mcp/tools.adapt)
    Tool(name="srv__exec", description="", parameters={"type": "object", "properties": {
        "script": {"type": "string"}}}, execute=lambda a, c: "")
    with pytest.raises(CodePatternRefused):
        Rule.parse("srv__exec:*ls*=allow")
    Rule.parse("srv__exec=allow")


def test_a_rule_made_before_its_code_tool_is_refused_at_the_next_prompt(make_forge, server):
    forge = make_forge(permissions=["later__run:echo *=allow"])

    @forge.tool(name="later__run", argument="code")
    def later(code: str) -> str:
        """Run it."""
        return code

    with pytest.raises(CodePatternRefused, match="later__run=allow"):
        forge.session("s").prompt("go")
    assert server.requests == []


def _python_turns(server, code: str) -> None:
    server.add(Turn([tool_call("python", {"code": code})]), Turn.text("done"))


def _run_under_exact_rule(make_forge, server, code: str):
    """The model calls python with ``code`` under an exact rule; (forge, tools asked, call)."""
    _python_turns(server, code)
    forge = make_forge(builtin_tools=True, namespace={"xs": [1, 2]},
                       permissions=["python:shown = len(xs)=allow"])
    asked = []
    forge.on_approval(lambda r: (asked.append(r.tool), "deny")[1])
    forge.session("s").prompt("count")
    return forge, asked, forge.session("s").messages()[1].tool_parts[0]


def test_an_exact_rule_runs_that_code_unasked_through_a_prompt(make_forge, server):
    forge, asked, call = _run_under_exact_rule(make_forge, server, "shown = len(xs)")
    assert call.state == "completed" and asked == [] and forge.namespace["shown"] == 2


@pytest.mark.parametrize("code", ["shown = len(xs)\nopen_it = 1", "shown = len(xs); open_it = 1"])
def test_code_beyond_the_exact_rule_asks_through_a_prompt(make_forge, server, code):
    forge, asked, call = _run_under_exact_rule(make_forge, server, code)
    assert asked == ["python"] and call.state == "error" and "open_it" not in forge.namespace


def test_whole_tool_rules_decide_every_call_through_a_prompt(make_forge, server):
    _python_turns(server, "ran = 1")
    forge = make_forge(builtin_tools=True, permissions=["python=allow"])
    forge.session("s").prompt("go")
    assert forge.namespace.get("ran") == 1
    _python_turns(server, "ran2 = 1")
    denied = make_forge(builtin_tools=True, permissions=["python=deny"])
    denied.session("s").prompt("go")
    assert "ran2" not in denied.namespace and "python" not in server.requests[-1].tools


def test_refused_as_configured_by_config_or_environment(monkeypatch):
    from traitlets import TraitError

    from forge_jupyter.config import Forge as ForgeConfig

    config = ForgeConfig()
    with pytest.raises(TraitError, match="python=allow for every call"):
        config.permissions = ["python:df.head*=allow"]  # what %config Forge.permissions sets
    config.permissions = ["python=allow", "write:data/*=ask"]
    monkeypatch.setenv("FORGE_PERMISSIONS", "write:data/*=ask,python:df.*()=allow")
    with pytest.raises(TraitError, match="argument is code"):
        ForgeConfig()


def test_a_stored_session_rule_over_code_asks_for_the_whole_tool(make_forge, server):
    """A session row written before such rules were refused: the rule never grants, and the
    session still takes prompts (its python calls ask)."""
    first = make_forge(db="duckdb")
    info = first.store.get_session(first.session("s").id)
    first.store.update_session(info.model_copy(update={"metadata": {
        **info.metadata, "permissions": ["python:df_head*=allow"]}}))
    first.close()
    _python_turns(server, "df_head_then = 1")
    forge = make_forge(db="duckdb", builtin_tools=True, permissions=["python=allow"])
    asked = []
    forge.on_approval(lambda r: (asked.append(r.tool), "deny")[1])
    forge.session("s").prompt("go")
    assert asked == ["python"] and "df_head_then" not in forge.namespace
