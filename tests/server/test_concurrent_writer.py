"""The API read while another process writes the same store: a Forge prompting in a loop (what
a kernel does) while the server pages through the sessions and the growing session's messages.
Neither side may fail, and neither blocks the other: the writer finishes every prompt with
no error, and the reader sees the session grow as it pages."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from traitlets.config import Config

from forge_jupyter.store.duckdb.store import DuckDBStore
from forge_jupyter.testing import Turn
from tests.server.api_helpers import TENANT, every_page, words

WORKER = str(Path(__file__).with_name("prompt_worker.py"))
PROMPTS = 15
pytestmark = pytest.mark.slow


@pytest.fixture
def db(tmp_path) -> Path:
    return tmp_path / "busy.duckdb"


@pytest.fixture
def jp_server_config(db) -> Config:
    return Config({"ServerApp": {"jpserver_extensions": {"forge_jupyter": True}},
                   "Forge": {"db": str(db), "tenant": TENANT}})


async def test_pages_read_while_a_process_prompts_in_a_loop_neither_fails(
        jp_fetch, model_server, db, tmp_path):
    for i in range(PROMPTS):
        model_server.add(Turn.text(words(f"answer{i}", 40), chunk=12, usage=(50 + i, 40)))
    # its stderr to a file: a pipe nobody reads would stall the writer once full
    log = (tmp_path / "writer.log").open("w")
    writer = subprocess.Popen(
        [sys.executable, WORKER, str(db), model_server.openai_base, TENANT, str(PROMPTS)],
        stdout=subprocess.PIPE, stderr=log, text=True)
    try:
        loop = asyncio.get_running_loop()
        sid = (await loop.run_in_executor(None, writer.stdout.readline)).strip()
        assert sid.startswith("ses_"), (tmp_path / "writer.log").read_text()
        lengths, reads = set(), 0
        while writer.poll() is None:
            sessions, _ = await every_page(jp_fetch, ("sessions",), "sessions", limit=1)
            assert [s["id"] for s in sessions] == [sid]
            messages, _ = await every_page(jp_fetch, ("sessions", sid, "messages"), "messages",
                                           limit=7)
            # each pass: every position once, in order, however the writer moved meanwhile
            assert [m["pos"] for m in messages] == list(range(len(messages)))
            assert len({m["id"] for m in messages}) == len(messages)
            lengths.add(len(messages))
            reads += 1
        report = json.loads(writer.stdout.read().splitlines()[-1])
    finally:
        if writer.poll() is None:
            writer.kill()
        writer.wait()
        log.close()
    assert writer.returncode == 0, (tmp_path / "writer.log").read_text()
    assert report == {"prompts": PROMPTS, "errors": []}
    assert len(lengths) > 2, f"the reads did not overlap the writes ({reads} passes)"

    final, _ = await every_page(jp_fetch, ("sessions", sid, "messages"), "messages", limit=7)
    stored = DuckDBStore(db, tenant_id=TENANT).read_timeline(sid)
    assert [m["id"] for m in final] == [m.id for m in stored] and len(stored) == 2 * PROMPTS
    assert all(m["status"] == "completed" for m in final)
