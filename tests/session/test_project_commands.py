"""A project's commands are project files: a link — the commands folder, ``.forge`` itself, a
command file leading inside the project or out, a chain — is refused, never sent as a prompt."""

from __future__ import annotations

import json

import pytest

from forge_jupyter.errors import InvalidOption, NotFound
from forge_jupyter.testing import Turn

SECRET = "TEMPLATE-FROM-ELSEWHERE"


@pytest.fixture
def place(make_forge, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    root = tmp_path / "nb"
    root.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "deploy.md").write_text(f"---\ndescription: theirs\n---\n{SECRET}\n")

    def make():
        return make_forge(root=root, output_root=tmp_path / "out")

    return make, root, elsewhere


def _link(root, elsewhere, how: str) -> None:
    commands = root / ".forge" / "commands"
    if how == "folder link":
        (root / ".forge").mkdir()
        commands.symlink_to(elsewhere, target_is_directory=True)
    elif how == ".forge link":
        (elsewhere / "commands").mkdir()
        (elsewhere / "commands" / "deploy.md").write_text(SECRET)
        (root / ".forge").symlink_to(elsewhere, target_is_directory=True)
    elif how == "file link inside":
        (root / "templates").mkdir()
        (root / "templates" / "deploy.md").write_text(SECRET)
        commands.mkdir(parents=True)
        (commands / "deploy.md").symlink_to(root / "templates" / "deploy.md")
    elif how == "link chain":
        commands.mkdir(parents=True)
        (root / "hop.md").symlink_to(elsewhere / "deploy.md")
        (commands / "deploy.md").symlink_to(root / "hop.md")


@pytest.mark.parametrize("how", ["folder link", ".forge link", "file link inside", "link chain"])
def test_a_linked_project_command_is_refused(place, server, how):
    make, root, elsewhere = place
    _link(root, elsewhere, how)
    forge = make()
    s = forge.session("s")
    with pytest.raises((InvalidOption, NotFound)) as caught:
        s.command("deploy")
    assert "symbolic link" in str(caught.value) or "symbolic link" in " ".join(
        forge.commands.problems)
    assert SECRET not in str(caught.value)
    assert "deploy" not in forge.commands.scan()
    assert any("symbolic link" in p for p in forge.commands.problems)
    assert SECRET not in json.dumps([r.body for r in server.requests])


def test_a_real_project_command_still_runs(place, server):
    make, root, _ = place
    (root / ".forge" / "commands").mkdir(parents=True)
    (root / ".forge" / "commands" / "hello.md").write_text("---\ndescription: hi\n---\nSay hi to $1.\n")
    server.add(Turn.text("hi Ada"))
    forge = make()
    assert forge.session("s").command("hello", "Ada").text == "hi Ada"
    assert forge.commands.scan()["hello"].where == str(root.resolve() / ".forge/commands/hello.md")
