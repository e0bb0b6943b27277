// The views' shared drawing frame (src/render/frames.ts): the cell's and the panel's views due
// draw in one animation frame, each once, and a costly frame holds the next one back.
import assert from "node:assert/strict";
import { test } from "node:test";
import { cancelDraw, drawSoon } from "../src/render/frames.js";

// Animation frames run when the test says so.
const frames: FrameRequestCallback[] = [];
(globalThis as Record<string, unknown>).requestAnimationFrame = (fn: FrameRequestCallback): number => frames.push(fn);

function runFrame(): void {
  const due = frames.splice(0);
  for (const fn of due) fn(performance.now());
}

// After the frame's cost is measured (a task posted from the frame).
const settled = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 5));

/** Until a frame is asked for; how long that took (ms). */
async function frameAsked(): Promise<number> {
  const since = performance.now();
  while (!frames.length && performance.now() - since < 5000) await settled();
  return performance.now() - since;
}

test("the views due draw together in one frame, each once; a cancelled one not at all", async () => {
  const drawn: string[] = [];
  const cell = (): void => { drawn.push("cell"); };
  const panel = (): void => { drawn.push("panel"); };
  const gone = (): void => { drawn.push("gone"); };
  drawSoon(cell);
  drawSoon(panel);
  drawSoon(cell); // a second batch before the frame
  drawSoon(gone);
  cancelDraw(gone);
  assert.deepEqual(drawn, [], "nothing is drawn before the frame");
  assert.equal(frames.length, 1, "one frame for all the views");
  runFrame();
  assert.deepEqual(drawn, ["cell", "panel"]);
  await settled();
});

test("after a frame that cost a lot, the next one waits a multiple of that cost", async () => {
  const slow = (): void => {
    const until = performance.now() + 30;
    while (performance.now() < until) { /* a frame that takes 30 ms */ }
  };
  drawSoon(slow);
  await frameAsked(); // (the last test's frame may hold this one back a little)
  runFrame();
  await settled();
  let drawn = 0;
  drawSoon(() => { drawn++; });
  assert.equal(frames.length, 0, "no frame is asked for at once after a costly one");
  assert.ok(await frameAsked() >= 60, "the next frame waited at least twice the last one's cost");
  runFrame();
  assert.equal(drawn, 1);
  await settled();
});
