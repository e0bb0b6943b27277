"""What the panel's box is offered after an ``@`` (notebook/mentions/complete.py) and the comm's
``complete`` as the kernel reads it: bounded, and never a folder outside the root."""

from __future__ import annotations

import pytest

from forge_jupyter.notebook import panel_protocol as proto
from forge_jupyter.notebook.mentions.complete import MAX_ITEMS, candidates


def test_files_are_offered_under_the_root_only(tmp_path):
    root = tmp_path / "root"
    (root / "data").mkdir(parents=True)
    (root / "data" / "a.csv").write_text("x")
    (root / ".hidden").write_text("x")
    (tmp_path / "secret.txt").write_text("x")
    (root / "out").symlink_to(tmp_path)
    offer = lambda q: [i.insert for i in candidates(q, {}, None, str(root))]  # noqa: E731
    assert offer("file:") == ["file:data/"]  # no hidden entry, no link out
    assert offer("file:data/") == ["file:data/a.csv"]
    assert offer("file:../") == [] and offer("file:out/") == [] and offer("file:/etc/") == []
    # inside a hidden folder (a cloned project's .forge/), however it is spelled
    (root / ".forge").mkdir()
    (root / ".forge" / "mcp.json").write_text("{}")
    (root / "data" / ".git").mkdir()
    (root / "data" / ".git" / "config").write_text("x")
    for spelled in ("file:.forge/", "file:data/.git/", "file:data/../.forge/", "file:./.forge/"):
        assert offer(spelled) == [], spelled


def test_names_are_filtered_by_what_is_typed_and_bounded():
    namespace = {f"v{i}": i for i in range(200)} | {"sales": [1], "_hidden": 1}
    assert [i.insert for i in candidates("sa", namespace, None, None)] == ["sales"]
    assert candidates("sa", namespace, None, None)[0].detail == "list"
    assert len(candidates("", namespace, None, None)) == MAX_ITEMS


def test_the_comm_reads_a_complete_request_and_refuses_a_huge_one():
    assert proto.parse({"type": "complete", "request_id": "complete_1", "query": "df"}) == \
        proto.Complete("complete_1", "df")
    with pytest.raises(proto.PanelError, match="at most 512"):
        proto.parse({"type": "complete", "request_id": "complete_1", "query": "x" * 10_000})
