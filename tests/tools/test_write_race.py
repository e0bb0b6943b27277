"""A directory swapped for a symbolic link while file tools run never lets them leave the root.

A second thread keeps replacing ``work/`` inside the root with a link to a folder outside it
(and back) while ``write``, ``edit`` and ``read`` run a few hundred times. Each call may succeed
(inside the root) or be refused; none may touch the folder outside.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import threading
import time
from pathlib import Path

import pytest

from forge_jupyter.errors import ToolError
from forge_jupyter.tools.base import ToolContext
from forge_jupyter.tools.edit import edit_tool
from forge_jupyter.tools.nofollow import parent_dir, replace_entry
from forge_jupyter.tools.paths import locate
from forge_jupyter.tools.read import read_tool
from forge_jupyter.tools.write import write_tool

ROUNDS = 300


@pytest.fixture
def place(tmp_path) -> tuple[Path, Path]:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "work").mkdir(parents=True)
    outside.mkdir()
    return root, outside


class Swapper:
    """Swaps ``root/work`` between a real directory and a link to ``outside`` until stopped."""

    def __init__(self, root: Path, outside: Path) -> None:
        self.work, self.kept, self.outside = root / "work", root / "work.real", outside
        self.stop = threading.Event()
        self.swaps = 0
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        deadline = time.monotonic() + 30  # bounded even if the writer never stops it
        while not self.stop.is_set() and time.monotonic() < deadline:
            try:
                os.rename(self.work, self.kept)
                os.symlink(self.outside, self.work)
                time.sleep(0)  # let the writer run while the link is in place
                os.unlink(self.work)
                os.rename(self.kept, self.work)
                self.swaps += 1
            except OSError:  # the writer created work/ again meanwhile: put things back
                self._repair()

    def _repair(self) -> None:
        with contextlib.suppress(OSError):
            if self.work.is_symlink():
                self.work.unlink()
            elif self.kept.exists() and self.work.exists():
                shutil.rmtree(self.work)  # made by the writer while work/ was away: inside the root
            if self.kept.exists() and not self.work.exists():
                os.rename(self.kept, self.work)

    def __enter__(self) -> Swapper:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()


def run(tool, ctx: ToolContext, **args) -> str | None:
    try:
        return asyncio.run(tool.run(args, ctx)).output
    except (ToolError, OSError) as exc:  # the Processor turns either into an error part
        return f"refused: {exc}"


def everything_under(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


def test_a_racing_symlink_never_takes_write_or_edit_outside_the_root(place):
    root, outside = place
    ctx = ToolContext(session_id="s", message_id="m", call_id="c", part_id="p", root=str(root))
    write, edit = write_tool(), edit_tool()
    outcomes: list[str | None] = []
    with Swapper(root, outside) as swapper:
        for i in range(ROUNDS):
            outcomes.append(run(write, ctx, path=f"work/f{i}.txt", content=f"v{i}\n"))
            outcomes.append(run(edit, ctx, path=f"work/e{i}.txt", old_string="", new_string=f"e{i}\n"))
    assert swapper.swaps > 10  # the race really ran
    assert everything_under(outside) == []
    assert any(o and o.startswith("Created") for o in outcomes)  # writes still work meanwhile
    for o in outcomes:
        assert o is not None and (o.startswith("Created") or o.startswith("refused:")), o


def test_a_racing_symlink_never_lets_read_show_a_file_outside_the_root(place):
    root, outside = place
    (outside / "secret.txt").write_text("top secret\n")
    (root / "work" / "secret.txt").write_text("inside\n")
    ctx = ToolContext(session_id="s", message_id="m", call_id="c", part_id="p", root=str(root))
    read = read_tool()
    with Swapper(root, outside) as swapper:
        outputs = [run(read, ctx, path="work/secret.txt") or "" for _ in range(ROUNDS)]
    assert swapper.swaps > 10
    assert not [o for o in outputs if "top secret" in o]
    assert any("inside" in o for o in outputs)


# ------------------------------------------------------------------ the walk, without a race

def test_the_walk_refuses_a_link_where_a_folder_was_checked(place):
    root, outside = place
    checked = locate(root, "work/f.txt", for_writing=True)  # work/ is a real folder now
    os.rename(root / "work", root / "work.real")
    os.symlink(outside, root / "work")  # …and a link to outside after the check
    with pytest.raises(ToolError, match="work is a symbolic link where a directory or file was checked"):
        with parent_dir(checked, create=True) as (fd, name):
            replace_entry(fd, name, b"x")
    assert everything_under(outside) == []


def test_a_loop_of_links_is_refused(place):
    root, _ = place
    (root / "loop").symlink_to(root / "loop")
    ctx = ToolContext(session_id="s", message_id="m", call_id="c", part_id="p", root=str(root))
    assert "a loop of links" in run(write_tool(), ctx, path="loop/x", content="x")


def test_read_refuses_a_fifo_without_waiting_for_a_writer(place):
    root, _ = place
    os.mkfifo(root / "pipe")
    ctx = ToolContext(session_id="s", message_id="m", call_id="c", part_id="p", root=str(root))
    assert "pipe is a FIFO (named pipe)" in run(read_tool(), ctx, path="pipe")
    assert "pipe is a FIFO (named pipe)" in run(write_tool(), ctx, path="pipe", content="x")
