"""Files of the memory folder are untrusted input: confined, bounded, valid Unicode."""

from __future__ import annotations

import datetime as dt
import os

import pytest

from forge_jupyter.errors import ToolError
from forge_jupyter.memory import LongTermMemory
from forge_jupyter.memory.folder import MAX_FILE_BYTES
from tests.memory.memory_fixture import write_fixture


@pytest.fixture
def outside(tmp_path):
    secret = tmp_path / "outside" / "secret.md"
    secret.parent.mkdir()
    secret.write_text("the launch code is swordfish\n")
    return secret


@pytest.mark.parametrize("path", [
    "../outside/secret.md", "./../outside/secret.md", "notes/../../outside/secret.md",
    "..//outside/secret.md", "{abs}", "notes/link-out.md", "linked-dir/secret.md", "MEMORY.md\0",
])
def test_reading_never_leaves_the_folder(keyword_memory, folder, outside, path):
    (folder / "notes" / "link-out.md").symlink_to(outside)
    (folder / "linked-dir").symlink_to(outside.parent, target_is_directory=True)
    with pytest.raises(ToolError) as caught:
        keyword_memory.read(path.format(abs=outside))
    assert "swordfish" not in str(caught.value)


def test_links_are_never_indexed_inside_or_out(keyword_memory, folder, outside):
    (folder / "out.md").symlink_to(outside)
    (folder / "again.md").symlink_to(folder / "MEMORY.md")
    (folder / "linked-dir").symlink_to(outside.parent, target_is_directory=True)
    report = keyword_memory.sync()
    skipped = dict(report.skipped)
    assert "symbolic link" in skipped["out.md"] and "symbolic link" in skipped["again.md"]
    assert keyword_memory.search("launch code swordfish").hits == []


def test_invalid_bytes_become_replacement_characters(keyword_memory, folder):
    (folder / "bad.md").write_bytes(b"caf\xe9 ledger \xed\xa0\x80 reconciled\n")
    keyword_memory.sync()
    [hit] = keyword_memory.search("ledger reconciled").hits
    assert hit.path == "bad.md" and "\ufffd" in hit.snippet
    hit.snippet.encode("utf-8")  # no lone surrogate survives


def test_binary_large_and_badly_named_files_are_bounded_or_left_out(keyword_memory, folder):
    (folder / "blob.md").write_bytes(b"\0\1\2" * 1000)
    big = folder / "big.md"
    big.write_text(("filler line of the big log\n" * 60_000) + "tail marker zebra\n")
    assert big.stat().st_size > MAX_FILE_BYTES
    os.close(os.open(os.path.join(os.fsencode(folder), b"odd-\xff.md"), os.O_CREAT | os.O_WRONLY))
    (folder / ".hidden").mkdir()
    (folder / ".hidden" / "x.md").write_text("hidden zebra\n")
    report = keyword_memory.sync()
    skipped = dict(report.skipped)
    assert "not a text file" in skipped["blob.md"]
    assert "first 1 MB" in skipped["big.md"] and "big.md" in report.indexed
    assert any("not valid UTF-8" in why for why in skipped.values())
    assert keyword_memory.search("zebra").hits == []  # past the bound, and the hidden folder


def test_the_daily_log_is_never_written_through_a_link(store, tmp_path, outside):
    folder = write_fixture(tmp_path / "mem", {"MEMORY.md": "x\n"})
    (folder / "2026-11-30.md").symlink_to(outside)
    memory = LongTermMemory(store, folder)
    with pytest.raises(ToolError, match="symbolic link"):
        memory.folder.append_log("## entry\n", dt.date(2026, 11, 30))
    assert outside.read_text() == "the launch code is swordfish\n"


def test_a_full_daily_log_continues_in_a_second_file(store, tmp_path):
    memory = LongTermMemory(store, tmp_path / "mem")
    day = dt.date(2026, 11, 30)
    (memory.folder.ensure() / "2026-11-30.md").write_text("x" * (MAX_FILE_BYTES - 10))
    assert memory.folder.append_log("## a new entry of some length\n", day) == "2026-11-30-2.md"
    assert (memory.path / "2026-11-30-2.md").read_text().startswith("# Memory log 2026-11-30")


def test_a_query_is_untrusted_too_bounded_and_made_valid(store, folder, fake_model_server):
    memory = LongTermMemory(store, folder, embedding_model="openai/fake-embedding",
                            litellm_kwargs={"api_base": fake_model_server.openai_base,
                                            "api_key": "sk-fake"})
    result = memory.search("churn \ud800 model " + "padding " * 2_000)
    assert result.mode == "hybrid" and result.hits[0].path == "MEMORY.md"
    sent = fake_model_server.embedding_requests[-1]["input"][0]
    assert len(sent) == 2_000 and "\ufffd" in sent


def test_where_the_folder_is(tmp_path, monkeypatch):
    from forge_jupyter.memory import memory_path

    monkeypatch.delenv("FORGE_MEMORY_DIR", raising=False)
    assert memory_path(None, tmp_path) == tmp_path / ".forge" / "memory"  # beside the notebook
    assert memory_path("notes/mem", tmp_path) == tmp_path / "notes" / "mem"
    assert memory_path(tmp_path / "abs", "/elsewhere") == tmp_path / "abs"
    monkeypatch.setenv("FORGE_MEMORY_DIR", str(tmp_path / "from-env"))
    assert memory_path(None, tmp_path) == tmp_path / "from-env"
    assert memory_path("given", tmp_path) == tmp_path / "given"  # the argument wins
