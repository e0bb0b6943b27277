"""TurnView in a real kernel (jupyter_client), with this test as the widget frontend.

Throttling: whatever the token rate, the view sends at most ~30 messages a second, and what a
view folds from them ends with exactly the stored text. Fallback: with no view answering, or
with FORGE_WIDGET=off, the turn streams as plain text.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

import pytest

from forge_jupyter.testing import FakeModelServer, Turn, delay, text, tool_call
from tests.browser.kernel_frontend import KERNEL_SETUP, KernelFrontend, max_in_window

pytestmark = pytest.mark.slow

RATE = 30  # the default throttle_hz


@pytest.fixture(scope="module")
def server(model_server: FakeModelServer) -> FakeModelServer:
    return model_server  # the module's (conftest.py)


@pytest.fixture(scope="module")
def kernel(server: FakeModelServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelFrontend]:
    cwd = tmp_path_factory.mktemp("kernel")
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env.pop("FORGE_WIDGET", None)
    fe = KernelFrontend(env=env, cwd=str(cwd))
    server.add("warm up")
    fe.run(KERNEL_SETUP.format(base=server.openai_base))
    yield fe
    fe.close()


def last_stdout_json(fe: KernelFrontend) -> dict:
    return json.loads("".join(fe.stdout).strip().splitlines()[-1])


def test_a_20000_chunk_stream_sends_at_most_30_messages_a_second_and_ends_exact(kernel):
    kernel.stdout.clear()
    kernel.run("""
s = f.session()
view = TurnView(f, s); view.start()
t0 = time.monotonic()
await asyncio.to_thread(synthetic_stream, s, 20_000)
took = time.monotonic() - t0
view.finish(s.messages())
print(json.dumps({"took": took, "sent": view.messages_sent, "fallback": view.fallback}))
print(stored_texts(s))
""")
    lines = "".join(kernel.stdout).strip().splitlines()
    info, stored = json.loads(lines[-2]), json.loads(lines[-1])
    assert info["fallback"] is False
    batches = kernel.batches()
    times = [b.at for b in batches]
    span = times[-1] - times[0]
    assert info["took"] > 1.0, "the stream should be spread over time to measure a rate"
    assert max_in_window(times) <= RATE + 2, f"{max_in_window(times)} messages in one second"
    assert len(batches) <= RATE * (span + 1) + 2
    assert len(batches) >= RATE * span * 0.5, "updates flow while the stream runs, not at its end"
    assert kernel.view.texts() == stored
    assert len(next(iter(stored.values()))) > 100_000


def test_a_real_stream_is_coalesced_and_a_view_that_missed_a_batch_resyncs(kernel, server):
    words = " ".join(f"w{i}" for i in range(700))  # ~3,400 one-character chunks
    # in ten pieces a tenth of a second apart: read lean, the chunks alone take ~0.1 s, and the
    # view's resync must happen while the stream still runs
    events = []
    for i in range(0, len(words), 340):
        events += [text(words[i:i + 340], chunk=1), delay(0.1)]
    server.add(Turn(events[:-1]))

    def drop_one_then_continue(fe: KernelFrontend, body: dict) -> None:
        # Pretend the view missed a batch (the first in-order one from seq 5 on, after the view
        # synced — on a loaded machine the first snapshot may already be past 5): it must ask
        # for a snapshot and still end exact.
        if (body.get("kind") == "batch" and fe.view.synced and fe.view.resyncs == 0
                and body["seq"] >= 5 and body["seq"] == fe.view.seq):  # just applied
            fe.view.seq -= 1

    kernel.stdout.clear()
    kernel.run("""
s = f.session()
view = TurnView(f, s); view.start()
f.announce(s.id, 'using the OFFLINE DEMO model')
msg = await s.prompt_async('Count.')
view.finish(s.messages())
print(stored_texts(s))
""", on_custom=drop_one_then_continue)
    stored = last_stdout_json(kernel)
    snapshots = [r for r in kernel.received if r.content["kind"] == "snapshot"]
    assert kernel.view.resyncs == 1 and len(snapshots) == 2  # ready, then hello
    notices = [op for r in kernel.received for op in r.content["ops"] if op["op"] == "notice"]
    assert notices[0]["message"] == "using the OFFLINE DEMO model"
    assert max_in_window([b.at for b in kernel.batches()]) <= RATE + 2
    assert kernel.view.texts() == stored
    assert next(iter(stored.values())) == words
    # The live display was replaced by the static record, the saved-notebook note by nothing.
    updates = [o for o in kernel.outputs if o["type"] == "update_display_data"]
    assert [bool(u["data"]) for u in updates[-2:]] == [True, False]
    assert "text/html" in updates[-2]["data"]


def test_without_a_view_the_turn_streams_as_text(kernel, server):
    server.add(Turn([text("Let me look."), tool_call("nothing_here", {"x": 1})]),
               Turn.text("No view answered, so this is plain text."))
    kernel.answer_ready = False
    kernel.stdout.clear()
    try:
        kernel.run("""
s = f.session()
view = TurnView(f, s, ready_timeout=0.3); view.start()
f.announce(s.id, 'using the OFFLINE DEMO model')
await asyncio.sleep(0.6)  # no view says ready: text mode from here on
msg = await s.prompt_async('Hello?')
view.finish(s.messages())
print(); print(view.fallback)
""")
    finally:
        kernel.answer_ready = True
    out = "".join(kernel.stdout)
    assert out.strip().endswith("True")
    assert "note: using the OFFLINE DEMO model\n\nLet me look." in out
    assert "✗ nothing_here failed: Unknown tool" in out
    assert "No view answered, so this is plain text." in out
    # Before the timeout the view was optimistic; after it, nothing more went to the widget.
    assert [op["op"] for b in kernel.batches() for op in b.content["ops"]] == ["notice"]


def test_a_view_loading_its_renderer_gets_longer_before_the_turn_goes_to_text(kernel):
    """A frontend without the labextension first asks the kernel for the renderer
    ({type: "code"}, ~90 KB): that view exists, so the 1.5 s wait for its ``ready`` is
    re-armed with CODE_TIMEOUT instead of printing text beside the widget about to appear."""
    kernel.first_message = {"type": "code"}
    kernel.stdout.clear()
    try:
        kernel.run("""
import forge_jupyter.notebook.widget as W
W.CODE_TIMEOUT, s = 1.2, f.session()
view = TurnView(f, s, ready_timeout=0.3); view.start()
await asyncio.sleep(0.8)  # past ready_timeout: the view asked for its code meanwhile
print('after 0.8 s', view.fallback)
await asyncio.sleep(1.2)  # past CODE_TIMEOUT too, and still no ready: text
print('after 2.0 s', view.fallback)
view.finish([])
""")
    finally:
        kernel.first_message = None
    out = "".join(kernel.stdout)
    assert "after 0.8 s False" in out and "after 2.0 s True" in out, out
    assert [r.content.get("kind") for r in kernel.received][:1] == ["code"]


def test_forge_widget_off_means_text_from_the_start(kernel, server):
    server.add(Turn.text("Plain from the first token."))
    kernel.outputs.clear()
    kernel.stdout.clear()
    kernel.run("""
os.environ['FORGE_WIDGET'] = 'off'
try:
    s = f.session()
    view = TurnView(f, s); view.start()
    msg = await s.prompt_async('Hi')
    view.finish(s.messages())
finally:
    del os.environ['FORGE_WIDGET']
print(view.fallback, view.widget is None)
""")
    out = "".join(kernel.stdout)
    assert "Plain from the first token." in out
    assert out.strip().endswith("True True")
    assert not [o for o in kernel.outputs if o["type"] in ("display_data", "update_display_data")]


def test_nbclient_gets_streamed_text_then_the_static_record(server, tmp_path, monkeypatch):
    import nbclient
    import nbformat

    for key, value in {"FORGE_MODEL": "openai/fake-model", "FORGE_API_BASE": server.openai_base,
                       "FORGE_API_KEY": "sk-fake", "FORGE_DB": str(tmp_path / "forge.duckdb"),
                       "LITELLM_LOCAL_MODEL_COST_MAP": "True"}.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("FORGE_WIDGET", raising=False)
    words = " ".join(f"n{i}" for i in range(60))
    server.add(Turn([text("Looking first."), tool_call("nothing_here", {})]),
               Turn([text(words, chunk=3)], chunk_delay=0.03))  # lasts past the ready timeout
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("%load_ext forge_jupyter"),
                nbformat.v4.new_code_cell("%%forge\nTalk to a headless frontend.")]
    streamed: list[str] = []  # every stream output as it arrived, before the turn ended

    class Watching(nbclient.NotebookClient):
        def output(self, outs, msg, display_id, cell_index):
            if msg["msg_type"] == "stream" and cell_index == 1:
                streamed.append(msg["content"]["text"])
            return super().output(outs, msg, display_id, cell_index)

    Watching(nb, timeout=120, kernel_name="python3",
             resources={"metadata": {"path": str(tmp_path)}}).execute()
    printed = "".join(streamed)
    assert "Looking first." in printed and words in printed  # live, as text
    # a stream output is shown as its own block while it lasts: none may end mid-sentence
    assert all(t.endswith("\n") for t in streamed), [t[-30:] for t in streamed]
    # When the turn ended, the streamed lines gave way to the record: the saved notebook
    # reads the turn once (the record) and then its value.
    outputs = nb.cells[1].outputs
    assert [o for o in outputs if o.output_type == "stream"] == []
    records = [o for o in outputs if o.output_type == "display_data" and o.data]
    assert len(records) == 1  # (the other display, the saved-notebook note, ended empty)
    assert 'data-state="error" data-tool="nothing_here"' in records[0].data["text/html"]
    assert "application/vnd.jupyter.widget-view+json" not in records[0].data
    value = [o for o in outputs if o.output_type == "execute_result"]
    assert words in value[0].data["text/html"]
