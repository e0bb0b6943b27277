"""The front end's TurnState (labextension/src/render/state.js) under Node, without a browser.

Every view of one widget model (a cloned notebook view, the same output shown twice) is handed
the same message object, so the state must never edit a row it got from a message.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

STATE_JS = Path(__file__).resolve().parents[2] / "labextension" / "src" / "render" / "state.js"

SCRIPT = """
const { TurnState, receive } = await import(process.argv[1]);
const part = (text) => ({ id: "p1", message_id: "m1", type: "text", text, time_end: null });
const message = { id: "m1", role: "assistant", status: "running" };
const views = [new TurnState(), new TurnState()];
// One message object per kernel message, delivered to both views, as the widget manager does.
const deliver = (msg) => views.map((s) => receive(s, msg, true));
const results = [];
results.push(deliver({ kind: "snapshot", seq: 3, ops: [
  { op: "message", message }, { op: "part", part: part("Hello") }] }));
results.push(deliver({ kind: "batch", seq: 4, ops: [
  { op: "delta", id: "p1", message_id: "m1", field: "text", text: ", wor" }] }));
results.push(deliver({ kind: "batch", seq: 5, ops: [
  { op: "part", part: part("Hello, world") },
  { op: "delta", id: "p1", message_id: "m1", field: "text", text: "!" }] }));
const after = views.map((s) => s.parts.get("p1").text);
results.push(deliver({ kind: "batch", seq: 6, ops: [
  { op: "delta", id: "p2", message_id: "m1", field: "text", text: "late" }] }));
console.log(JSON.stringify({ results, after, orphan: views.map((s) => s.parts.get("p2").text) }));
"""


def test_views_sharing_one_message_each_add_a_fragment_once():
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    done = subprocess.run([node, "--input-type=module", "-e", SCRIPT, STATE_JS.as_uri()],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["results"] == [["synced", "synced"]] + [["applied", "applied"]] * 3
    # Before the fix, the second view's delta landed on the row the first view had already
    # extended: "Hello, wor, wor", "Hello, world!!".
    assert out["after"] == ["Hello, world!", "Hello, world!"]
    assert out["orphan"] == ["late", "late"]
