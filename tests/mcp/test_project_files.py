"""A project folder cannot borrow trust or reach outside itself: its ``.forge/mcp.json`` and
its skills are project files — a link (to another project's file, inside the folder or out, a
chain of them) is refused; trust is keyed by the folder's own file and its content; a project
MCP server runs in the project's folder. Real MCP server processes (mcp_servers.py)."""

from __future__ import annotations

import json
import os
import shutil
import sys

import pytest

from forge_jupyter.mcp.config import load_servers
from forge_jupyter.project_files import ProjectFileRefused
from forge_jupyter.testing import Turn, tool_call
from tests.mcp.mcp_helpers import SERVERS, tool_parts

EVIL = "import pathlib\npathlib.Path({marker!r}).write_text('the clone ran its own code')\n"


def config(folder, servers: dict) -> None:
    (folder / ".forge").mkdir(parents=True, exist_ok=True)
    (folder / ".forge" / "mcp.json").write_text(json.dumps({"mcpServers": servers}))


@pytest.fixture
def trusted_elsewhere(mcp_forge, tmp_path):
    """Another project, ``a``, whose file runs ``python server.py`` and is trusted; the clone
    (the fixtures' ``nb``) holds a ``server.py`` of its own that would leave a marker."""
    other = tmp_path / "a"
    other.mkdir()
    shutil.copy(SERVERS, other / "server.py")
    config(other, {"proj": {"command": sys.executable, "args": ["server.py", "stdio"]}})
    assert mcp_forge(root=other).mcp.trust() == str((other / ".forge" / "mcp.json").resolve())
    clone = tmp_path / "nb"
    marker = tmp_path / "marker.txt"
    (clone / "server.py").write_text(EVIL.format(marker=str(marker)))
    return other, clone, marker


def _link(clone, other, how: str) -> None:
    (clone / ".forge").mkdir(exist_ok=True)
    target = other / ".forge" / "mcp.json"
    if how == "file link":
        (clone / ".forge" / "mcp.json").symlink_to(target)
    elif how == "relative link":
        (clone / ".forge" / "mcp.json").symlink_to("../../a/.forge/mcp.json")
    elif how == "link chain":
        (clone / "hop").symlink_to(target)
        (clone / ".forge" / "mcp.json").symlink_to(clone / "hop")
    elif how == "folder link":
        (clone / ".forge").rmdir()
        (clone / ".forge").symlink_to(other / ".forge", target_is_directory=True)


@pytest.mark.parametrize("how", ["file link", "relative link", "link chain", "folder link"])
def test_a_linked_mcp_json_borrows_no_trust(mcp_forge, server, trusted_elsewhere, monkeypatch,
                                            how):
    other, clone, marker = trusted_elsewhere
    _link(clone, other, how)
    monkeypatch.chdir(clone)  # the kernel runs in the clone, as a notebook's does
    server.add(Turn([tool_call("proj__lookup", {"key": "a"})]), Turn.text("no such tool"))
    forge = mcp_forge()
    forge.session("s").prompt("look a up")
    assert not marker.exists()  # the clone's server.py never ran
    assert forge.mcp.status() == [] and "proj__lookup" not in forge.registry.names()
    assert any("is a symbolic link" in p for p in forge.mcp.problems)
    with pytest.raises(ProjectFileRefused, match="symbolic link"):
        forge.mcp.trust()  # trust is for this folder's own file, never a link's target


def test_the_same_content_in_another_folder_is_not_trusted(mcp_forge, trusted_elsewhere,
                                                           monkeypatch):
    other, clone, marker = trusted_elsewhere
    (clone / ".forge").mkdir()
    shutil.copy(other / ".forge" / "mcp.json", clone / ".forge" / "mcp.json")  # a copy, not a link
    monkeypatch.chdir(clone)
    forge = mcp_forge()
    assert [s["state"] for s in forge.mcp.status()] == ["untrusted"]
    assert not marker.exists()


def test_a_project_server_runs_in_the_project_folder(mcp_forge, server, tmp_path):
    """``python server.py`` finds the project's server.py, wherever the kernel runs from; a
    relative ``cwd`` is relative to the project's folder."""
    root = tmp_path / "nb"
    shutil.copy(SERVERS, root / "server.py")
    (root / "tools").mkdir()
    shutil.copy(SERVERS, root / "tools" / "other.py")
    config(root, {"here": {"command": sys.executable, "args": ["server.py", "stdio"]},
                  "sub": {"command": sys.executable, "args": ["other.py", "stdio"],
                          "cwd": "tools"}})
    server.add(Turn([tool_call("here__lookup", {"key": "a"}), tool_call("sub__lookup",
                                                                         {"key": "b"})]),
               Turn.text("done"))
    forge = mcp_forge()
    forge.mcp.trust()
    s = forge.session("s")
    s.prompt("look both up")
    assert [p.output for p in tool_parts(forge, s)] == ["alpha", "beta"]
    specs, _ = load_servers(root)
    assert specs["here"].cwd == str(root.resolve())
    assert specs["sub"].cwd == str(root.resolve() / "tools")


# ------------------------------------------------------------------------------ skills


def _skill(folder, name: str, body: str = "Use viridis. SECRET-SKILL-BODY.") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {name} things\n---\n{body}\n")


@pytest.mark.parametrize("how", ["skills folder link", "skill folder link", "SKILL.md link",
                                 "link inside the project"])
def test_a_linked_project_skill_is_refused(mcp_forge, server, tmp_path, how):
    root = tmp_path / "nb"
    skills = root / ".forge" / "skills"
    elsewhere = tmp_path / "elsewhere"
    _skill(elsewhere / "borrowed", "borrowed")
    if how == "skills folder link":
        (root / ".forge").mkdir()
        skills.symlink_to(elsewhere, target_is_directory=True)
    elif how == "skill folder link":
        skills.mkdir(parents=True)
        (skills / "borrowed").symlink_to(elsewhere / "borrowed", target_is_directory=True)
    elif how == "SKILL.md link":
        (skills / "borrowed").mkdir(parents=True)
        (skills / "borrowed" / "SKILL.md").symlink_to(elsewhere / "borrowed" / "SKILL.md")
    else:  # a link that stays inside the project is refused too
        _skill(root / "notes" / "borrowed", "borrowed")
        skills.mkdir(parents=True)
        (skills / "borrowed").symlink_to(root / "notes" / "borrowed", target_is_directory=True)
    server.add(Turn.text("ok"))
    forge = mcp_forge()
    forge.session("s").prompt("hello")
    assert "borrowed" not in json.dumps(server.requests[0].body.get("tools", []))
    assert any("symbolic link" in p for p in forge.skills.problems)


@pytest.mark.parametrize("file", ["../other/SKILL.md", "sub/../../other/SKILL.md",
                                  "leak.txt", "sub/leak.txt", "./../other/SKILL.md"])
def test_a_project_skill_s_file_never_leads_outside_or_through_a_link(mcp_forge, server,
                                                                       tmp_path, file):
    skills = tmp_path / "nb" / ".forge" / "skills"
    _skill(skills / "mine", "mine")
    _skill(skills / "other", "other", "OTHER-SKILL-BODY")
    (skills / "mine" / "sub").mkdir()
    (tmp_path / "secret.txt").write_text("TOP-SECRET-FILE")
    (skills / "mine" / "leak.txt").symlink_to(tmp_path / "secret.txt")
    (skills / "mine" / "sub" / "leak.txt").symlink_to(skills / "other" / "SKILL.md")
    server.add(Turn([tool_call("skill", {"name": "mine", "file": file})]), Turn.text("no"))
    forge = mcp_forge()
    s = forge.session("s")
    s.prompt("read it")
    [call] = tool_parts(forge, s)
    assert call.state == "error"
    assert "TOP-SECRET" not in (call.error or "") and "OTHER-SKILL" not in (call.error or "")


def test_a_real_project_skill_still_loads_with_its_files(mcp_forge, server, tmp_path):
    skills = tmp_path / "nb" / ".forge" / "skills"
    _skill(skills / "mine", "mine")
    (skills / "mine" / "palette.txt").write_text("#440154\n")
    server.add(Turn([tool_call("skill", {"name": "mine"}),
                     tool_call("skill", {"name": "mine", "file": "palette.txt"})]),
               Turn.text("ok"))
    forge = mcp_forge()
    s = forge.session("s")
    s.prompt("load it")
    body, palette = tool_parts(forge, s)
    assert "SECRET-SKILL-BODY" in body.output and "palette.txt" in body.output
    assert palette.output.strip() == "#440154"
    assert os.path.isdir(skills)
