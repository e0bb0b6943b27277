"""The global output limit: the head the model sees, the full output saved, bounded memory."""

from __future__ import annotations

import hashlib
import os
import tracemalloc
from pathlib import Path

import pytest

from forge_jupyter.tools.truncate import MAX_BYTES, MAX_LINES, BoundedOutput, truncate

MB = 1024 * 1024
MEMORY_BUDGET = 4 * MB  # "a few MB" beyond the output itself


def file_sha256(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(MB):
            h.update(chunk)
    return h.hexdigest()


def text_sha256(text: str) -> str:
    h = hashlib.sha256()
    for i in range(0, len(text), MB):
        h.update(text[i:i + MB].encode())
    return h.hexdigest()


def head_of(t) -> str:
    """What the model sees before the truncation footer."""
    return t.text.split("\n\n… [output truncated", 1)[0]


def test_output_under_the_limit_is_unchanged_and_not_saved(tmp_path):
    text = "line\n" * MAX_LINES  # exactly at the line limit
    t = truncate(text, output_dir=tmp_path, name="call_1")
    assert (t.text, t.truncated, t.total_lines, t.total_bytes, t.saved_path) == (
        text, False, MAX_LINES, len(text), None)
    assert list(tmp_path.iterdir()) == []


def test_over_the_line_limit_keeps_the_first_2000_lines_and_saves_everything(tmp_path):
    text = "".join(f"row {i}\n" for i in range(1, 3001))
    t = truncate(text, output_dir=tmp_path / "out", name="call_1")
    assert t.truncated and t.total_lines == 3000 and t.total_bytes == len(text)
    head, footer = head_of(t), t.text[len(head_of(t)):]
    assert head == "".join(f"row {i}\n" for i in range(1, 2001))
    assert "showing lines 1–2,000 of 3,000" in footer and "1,000 more lines cut" in footer
    assert t.saved_path == str(tmp_path / "out" / "call_1.txt")
    assert Path(t.saved_path).read_text() == text
    assert f'read(path="{t.saved_path}", offset=2000, limit=2000)' in footer


def test_over_the_byte_limit_keeps_whole_lines_within_50_kb(tmp_path):
    line = "é" * 99 + "\n"  # 199 bytes in UTF-8, 100 characters
    text = line * 1000
    t = truncate(text, output_dir=tmp_path, name="bytes")
    head = head_of(t)
    assert len(head.encode()) <= MAX_BYTES
    assert head == line * (MAX_BYTES // len(line.encode()))
    assert t.total_bytes == len(text.encode()) and t.total_lines == 1000
    assert Path(t.saved_path).read_text(encoding="utf-8") == text


def test_a_first_line_over_the_byte_limit_is_cut_at_a_character_boundary(tmp_path):
    text = "€" * 40_000  # 120,000 bytes, one line, no newline
    t = truncate(text, output_dir=tmp_path, name="one_line")
    head = head_of(t)
    assert set(head) == {"€"} and len(head.encode()) <= MAX_BYTES < len(head.encode()) + 3
    assert "of line 1, which alone is over the 50.0 KB limit" in t.text
    assert t.total_lines == 1 and Path(t.saved_path).read_text(encoding="utf-8") == text


def test_without_an_output_folder_the_head_is_kept_and_the_footer_says_nothing_was_saved():
    t = truncate("x\n" * 5000, output_dir=None, name="call")
    assert t.truncated and t.saved_path is None
    assert "was not saved (this session has no output folder)" in t.text


def test_unsafe_names_become_plain_file_names(tmp_path):
    t = truncate("x\n" * 5000, output_dir=tmp_path, name="../../etc/passwd")
    assert Path(t.saved_path).parent == tmp_path and Path(t.saved_path).name == ".._.._etc_passwd.txt"


def test_a_lone_surrogate_is_counted_and_saved_as_a_replacement(tmp_path):
    text = "bad \udc80 byte\n" * 5000
    t = truncate(text, output_dir=tmp_path, name="surrogate")
    assert t.truncated
    valid = "bad \ufffd byte\n" * 5000  # U+FFFD, as everywhere text enters (scrub.valid_text)
    assert Path(t.saved_path).read_text(encoding="utf-8") == valid
    assert t.total_bytes == len(valid.encode())
    assert t.text.startswith("bad \ufffd byte\n")


def test_streamed_output_under_the_limit_is_the_whole_text(tmp_path):
    out = BoundedOutput(tmp_path, "small")
    for piece in ["a", "b\n", "c"]:
        out.write(piece)
    t = out.result()
    assert (t.text, t.truncated, t.total_lines, t.saved_path) == ("ab\nc", False, 2, None)


def test_streamed_output_appears_on_disk_only_when_finished(tmp_path):
    out = BoundedOutput(tmp_path, "stream")
    for i in range(5000):
        out.write(f"{i}\n")
    assert out.over and not (tmp_path / "stream.txt").exists()
    t = out.result()
    assert t.truncated and t.total_lines == 5000
    assert Path(t.saved_path).read_text() == "".join(f"{i}\n" for i in range(5000))
    assert out.result() is t
    with pytest.raises(ValueError, match="after result"):
        out.write("more")


def test_a_failed_producer_leaves_no_file_behind(tmp_path):
    with pytest.raises(RuntimeError), BoundedOutput(tmp_path, "failed") as out:
        out.write("x\n" * 5000)
        raise RuntimeError("the producer broke")
    assert list(tmp_path.iterdir()) == []


# The big inputs are 32 MiB, 8 times MEMORY_BUDGET: a truncation that kept its input (or a
# copy of it) would pass the budget 8 times over, so the bound shows as well as at 100 MiB,
# in a third of the time. Still out of the inner loop.
BLOCKS = 328  # 100 KiB blocks: 1024 lines of 100 bytes each; 328 of them ≈ 32 MiB


@pytest.mark.slow
def test_a_32_mb_string_is_truncated_in_bounded_memory(tmp_path):
    text = "".join(f"{i:09d} " + "x" * 89 + "\n" for i in range(1024)) * BLOCKS
    tracemalloc.start()
    try:
        t = truncate(text, output_dir=tmp_path, name="big")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < MEMORY_BUDGET, f"peak {peak / MB:.1f} MB"
    assert t.truncated and t.total_lines == 1024 * BLOCKS and t.total_bytes == BLOCKS * 100 * 1024
    assert t.total_bytes > 8 * MEMORY_BUDGET
    assert t.text.startswith("000000000 x") and len(t.text.encode()) < MAX_BYTES + 1024
    assert os.path.getsize(t.saved_path) == BLOCKS * 100 * 1024
    assert file_sha256(t.saved_path) == text_sha256(text)


def test_a_32_mb_streamed_output_is_truncated_in_bounded_memory(tmp_path):
    block = ("ü" + "y" * 1022 + "\n") * 64  # 64 KiB + 64 bytes of UTF-8 a block
    expected = hashlib.sha256()
    total_bytes = 0
    tracemalloc.start()
    try:
        out = BoundedOutput(tmp_path, "stream")
        for i in range(BLOCKS * 100 // 64):  # 64 KiB blocks, as many bytes as above
            piece = f"block {i}\n" + block
            data = piece.encode()
            expected.update(data)
            total_bytes += len(data)
            out.write(piece)
        t = out.result()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert total_bytes > 8 * MEMORY_BUDGET
    assert peak < MEMORY_BUDGET, f"peak {peak / MB:.1f} MB"
    assert t.truncated and t.total_bytes == total_bytes and t.total_lines == BLOCKS * 100 // 64 * 65
    assert file_sha256(t.saved_path) == expected.hexdigest()
