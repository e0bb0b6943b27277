// The front end's TurnState (src/render/state.ts), without a browser: how snapshots and
// batches advance it. Every view of one widget model (a cloned notebook view, the same output
// shown twice) is handed the same message object, so the state must never edit a row it got
// from a message.
import assert from "node:assert/strict";
import { test } from "node:test";

import type { Message, TextPart, WidgetMessage } from "../src/protocol.generated.js";
import { receive, TurnState } from "../src/render/state.js";

const part = (text: string): TextPart => ({
  id: "p1", session_id: "s1", message_id: "m1", created_at: 1, metadata: {}, type: "text", text,
  synthetic: false, time_start: 1, time_end: null,
});
const message = { id: "m1", role: "assistant", status: "running" } as Message;
const text = (s: TurnState, id: string): string => (s.parts.get(id) as TextPart).text;

test("views sharing one message each add a fragment once", () => {
  const views = [new TurnState(), new TurnState()];
  // One message object per kernel message, delivered to both views, as the widget manager does.
  const deliver = (msg: WidgetMessage) => views.map((s) => receive(s, msg, true));
  const results = [];
  results.push(deliver({ kind: "snapshot", seq: 3, ops: [
    { op: "message", message }, { op: "part", part: part("Hello") }] }));
  results.push(deliver({ kind: "batch", seq: 4, ops: [
    { op: "delta", id: "p1", message_id: "m1", field: "text", text: ", wor" }] }));
  results.push(deliver({ kind: "batch", seq: 5, ops: [
    { op: "part", part: part("Hello, world") },
    { op: "delta", id: "p1", message_id: "m1", field: "text", text: "!" }] }));
  const after = views.map((s) => text(s, "p1"));
  results.push(deliver({ kind: "batch", seq: 6, ops: [
    { op: "delta", id: "p2", message_id: "m1", field: "text", text: "late" }] }));
  assert.deepEqual(results, [["synced", "synced"], ["applied", "applied"], ["applied", "applied"],
    ["applied", "applied"]]);
  // Before the fix, the second view's delta landed on the row the first view had already
  // extended: "Hello, wor, wor", "Hello, world!!".
  assert.deepEqual(after, ["Hello, world!", "Hello, world!"]);
  assert.deepEqual(views.map((s) => text(s, "p2")), ["late", "late"]);
});

test("a batch is applied in order only: waiting before the snapshot, stale, resync on a gap", () => {
  const s = new TurnState();
  const batch = (seq: number): WidgetMessage => ({ kind: "batch", seq, ops: [
    { op: "notice", message: `batch ${seq}`, level: "info" }] });
  assert.equal(receive(s, batch(1), false), "waiting");
  assert.equal(receive(s, { kind: "snapshot", seq: 2, ops: [{ op: "done" }] }, false), "synced");
  assert.equal(s.done, true);
  assert.equal(receive(s, batch(2), true), "stale");
  assert.equal(receive(s, batch(4), true), "resync");
  assert.equal(receive(s, batch(3), true), "applied");
  assert.deepEqual(s.notices, [{ message: "batch 3", level: "info" }]);
  assert.equal(receive(s, { kind: "code", error: "no renderer" }, true), "ignored");
  assert.equal(s.seq, 3);
});

test("an answered question keeps its text and who answered; a decision names the rule", () => {
  const s = new TurnState();
  s.apply({ op: "approval", request: { id: "qst_1", part_id: "p9", tool: "question", kind: "question",
    question: "Which?", options: ["a", "b"] } });
  assert.equal(s.pendingApprovals().length, 1);
  s.apply({ op: "answered", id: "qst_1", answer: "answered", reason: null, text: "a", by: "panel" });
  assert.deepEqual(s.pendingApprovals(), []);
  const card = s.approvalFor("p9");
  assert.equal(card?.answer, "answered");
  assert.equal(card?.text, "a");
  assert.equal(card?.by, "panel");
  s.apply({ op: "decision", id: "p9", answer: "deny", by: "rule", rule: "python:*=deny", reason: null });
  assert.deepEqual(s.decisions.get("p9"), { answer: "deny", by: "rule", rule: "python:*=deny", reason: null });
});
