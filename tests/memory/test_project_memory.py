"""The project's own ``.forge/memory`` is a project file: a link there — to another folder,
inside the project or out, through ``.forge`` itself, a chain — is refused at every use, never
indexed or read; a memory folder the person names elsewhere is theirs, links and all."""

from __future__ import annotations

import pytest

from forge_jupyter import Forge
from forge_jupyter.errors import ToolError
from forge_jupyter.memory import LongTermMemory, memory_path, project_of
from forge_jupyter.store.inmemory.store import MemoryStore

SECRET = "the launch code is swordfish"


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project folder, and someone else's notes a link would like indexed."""
    monkeypatch.delenv("FORGE_MEMORY_DIR", raising=False)
    root = tmp_path / "clone"
    root.mkdir()
    notes = tmp_path / "their-notes"
    notes.mkdir()
    (notes / "MEMORY.md").write_text(f"# Facts\n\n{SECRET}\n")
    return root, notes


def _link(root, notes, how: str) -> None:
    if how == "memory link":
        (root / ".forge").mkdir()
        (root / ".forge" / "memory").symlink_to(notes, target_is_directory=True)
    elif how == ".forge link":
        (notes.parent / "their-project" / ".forge").mkdir(parents=True)
        (notes.parent / "their-project" / ".forge" / "memory").symlink_to(notes)
        (root / ".forge").symlink_to(notes.parent / "their-project" / ".forge",
                                     target_is_directory=True)
    elif how == "link chain":
        (root / ".forge").mkdir()
        (root / "hop").symlink_to(notes, target_is_directory=True)
        (root / ".forge" / "memory").symlink_to(root / "hop", target_is_directory=True)
    elif how == "link inside the project":
        (root / "docs").mkdir()
        (root / "docs" / "MEMORY.md").write_text(f"{SECRET}\n")
        (root / ".forge").mkdir()
        (root / ".forge" / "memory").symlink_to(root / "docs", target_is_directory=True)


@pytest.mark.parametrize("how", ["memory link", ".forge link", "link chain",
                                 "link inside the project"])
def test_a_linked_project_memory_is_never_indexed_or_read(project, how):
    root, notes = project
    _link(root, notes, how)
    path = memory_path(None, root)
    memory = LongTermMemory(MemoryStore(), path, project=project_of(path, root))
    for use in (lambda: memory.search("launch code swordfish"), lambda: memory.read("MEMORY.md"),
                memory.sync):
        with pytest.raises(ToolError, match="symbolic link") as caught:
            use()
        assert "swordfish" not in str(caught.value)
    assert sorted(p.name for p in notes.iterdir()) == ["MEMORY.md"]  # nothing written there


def test_a_forge_s_memory_search_refuses_a_linked_project_memory(project, fake_model_server):
    root, notes = project
    _link(root, notes, "memory link")
    forge = Forge(db=":memory:", root=root, builtin_tools=False,
                  **fake_model_server.model_kwargs("openai"))
    try:
        assert forge.memory is not None and forge.memory.folder.project == root.resolve()
        with pytest.raises(ToolError, match="symbolic link"):
            forge.memory_search("swordfish")
    finally:
        forge.close()


def test_a_link_put_in_place_after_first_use_is_refused_too(project):
    root, notes = project
    path = memory_path(None, root)
    memory = LongTermMemory(MemoryStore(), path, project=project_of(path, root))
    assert memory.search("anything").hits == []  # a real folder: created and used
    real = root / ".forge" / "memory"
    real.rename(root / ".forge" / "old-memory")
    real.symlink_to(notes, target_is_directory=True)
    with pytest.raises(ToolError, match="symbolic link"):
        memory.search("swordfish")


def test_a_memory_folder_the_person_names_may_be_a_link(project):
    root, notes = project
    (root / "mine").symlink_to(notes, target_is_directory=True)
    path = memory_path(str(root / "mine"), root)
    assert project_of(path, root) is None  # not the project's own folder: the person's choice
    memory = LongTermMemory(MemoryStore(), path, project=project_of(path, root))
    [hit] = memory.search("launch code swordfish").hits
    assert "swordfish" in hit.snippet
