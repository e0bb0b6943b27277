"""Skills: listed to the model by name and description, loaded on demand through the ``skill``
tool, absent from the context until used; skill files are untrusted input."""

from __future__ import annotations

import os
from pathlib import Path

from forge_jupyter.testing import Turn, tool_call
from tests.mcp.mcp_helpers import tool_parts

BODY = "Always use the viridis palette and 12pt fonts. SECRET-STEP-42."


def skill(base, folder: str, text: str) -> None:
    path = base / folder
    path.mkdir(parents=True, exist_ok=True)
    (path / "SKILL.md").write_text(text)


def _setup(tmp_path):
    project = tmp_path / "nb" / ".forge" / "skills"
    user = tmp_path / "home" / ".forge" / "skills"
    skill(project, "plot-style", f"---\nname: plot-style\ndescription: How this team styles "
                                 f"figures\n  (colours, fonts).\n---\n{BODY}\n")
    (project / "plot-style" / "palette.txt").write_text("#440154 #21918c #fde725\n")
    skill(user, "plot-style", "---\nname: plot-style\ndescription: the user's older copy\n---\nold\n")
    skill(user, "sql-habits", "---\nname: sql-habits\ndescription: Write SQL with CTEs\n---\nUse CTEs.\n")
    skill(user, "bad name", "---\nname: ../escape\ndescription: tries to leave\n---\nx\n")
    skill(user, "no-description", "---\nname: no-description\n---\nx\n")
    skill(user, "newline\n", "---\ndescription: a folder name ending in a newline\n---\nx\n")
    outside = tmp_path / "outside"
    skill(outside, "linked", "---\nname: linked\ndescription: from elsewhere\n---\nx\n")
    os.symlink(outside / "linked", user / "linked")  # a skill folder leading out: not read
    (tmp_path / "secret.txt").write_text("top secret\n")
    os.symlink(tmp_path / "secret.txt", project / "plot-style" / "leak.txt")
    return project


def test_skills_are_listed_by_name_and_description_only(mcp_forge, server, tmp_path):
    _setup(tmp_path)
    server.add(Turn.text("ok"))
    forge = mcp_forge()
    forge.session("s").prompt("hello")
    request = server.requests[0]
    tools = {t["function"]["name"]: t["function"] for t in request.body["tools"]}
    described = tools["skill"]["description"]
    assert "- plot-style: How this team styles figures (colours, fonts)." in described
    assert "- sql-habits: Write SQL with CTEs" in described
    assert "older copy" not in described  # the project's skill wins by name
    assert "escape" not in described and "linked" not in described
    assert "no-description" not in described and "newline" not in described
    assert tools["skill"]["parameters"]["properties"]["name"]["enum"] == ["plot-style", "sql-habits"]
    assert "SECRET-STEP-42" not in str(request.body)  # instructions: not before they are used


def test_a_skill_is_loaded_on_demand_with_its_files(mcp_forge, server, tmp_path):
    _setup(tmp_path)
    server.add(Turn([tool_call("skill", {"name": "plot-style"})]),
               Turn([tool_call("skill", {"name": "plot-style", "file": "palette.txt"}),
                     tool_call("skill", {"name": "plot-style", "file": "../../../../secret.txt"}),
                     tool_call("skill", {"name": "plot-style", "file": "leak.txt"}),
                     tool_call("skill", {"name": "plot-style", "file": str(tmp_path / "secret.txt")}),
                     tool_call("skill", {"name": "../plot-style"})]),
               Turn.text("styled"))
    forge = mcp_forge()
    s = forge.session("s")
    assert s.prompt("make a plot").text == "styled"
    loaded, palette, up, link, absolute, bad_name = tool_parts(forge, s)
    assert loaded.output.startswith("# Skill: plot-style\n\n" + BODY)
    assert "- palette.txt" in loaded.output
    assert "SECRET-STEP-42" in str(server.requests[1].body)  # in context once used
    assert palette.output == "#440154 #21918c #fde725\n"
    for refused in (up, link, absolute):
        assert refused.state == "error" and "never lead outside it" in refused.error
    assert "top secret" not in str(server.requests[2].body)
    assert bad_name.state == "error" and "Invalid arguments" in bad_name.error


def test_skill_files_are_bounded_and_made_valid_text(mcp_forge, server, tmp_path):
    project = tmp_path / "nb" / ".forge" / "skills" / "big"
    project.mkdir(parents=True)
    (project / "SKILL.md").write_bytes(b"---\nname: big\ndescription: bad \xff bytes\n---\n"
                                       + b"y" * 400_000)
    server.add(Turn([tool_call("skill", {"name": "big"})]), Turn.text("ok"))
    forge = mcp_forge()
    s = forge.session("s")
    s.prompt("go")
    assert "- big: bad \ufffd bytes" in server.requests[0].body["tools"][0]["function"]["description"]
    (part,) = tool_parts(forge, s)
    assert "output truncated" in part.output  # the global limit applies as to any tool
    saved = Path(part.metadata["truncated"]["saved"]).read_text()
    assert saved.endswith("[cut: the file is over 256 KB]") and len(saved) < 300_000


def test_no_skills_no_skill_tool(mcp_forge, server):
    server.add(Turn.text("ok"))
    mcp_forge().session("s").prompt("hi")
    assert "skill" not in server.requests[0].tools
