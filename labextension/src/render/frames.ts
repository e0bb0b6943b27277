// One drawing frame for every turn view on the page (a cell's widget and the side panel show
// the same turn), paced by what the frames cost. Each view drawing in its own animation frame
// had the page style, lay out and paint twice per update; and on a big JupyterLab page a frame
// costs several milliseconds however little changed, so drawing every batch (~30 a second,
// two views) kept the main thread busy most of the stream: any other load on the machine then
// turned those frames into long tasks. Here the views due draw together, in one frame, and the
// next drawing frame waits PACE times as long as the last one took, script and rendering both
// (measured up to a task posted after the frame's paint), so drawing takes at most about
// 1 / (PACE + 1) of the main thread: on a fast machine every batch is drawn as it comes, on a
// loaded one text arrives in larger steps and the page stays responsive.

const PACE = 3;
const MAX_WAIT_MS = 250; // an answer never looks stuck, whatever a frame cost

type Draw = () => void;

const due = new Set<Draw>();
let frame = 0;
let timer: ReturnType<typeof setTimeout> | 0 = 0;
let measuring = false; // a drawing frame's cost is not known yet
let nextAt = 0; // performance.now() before which no drawing frame starts

/** Calls `draw` in the next drawing frame, with every other view's that is due. */
export function drawSoon(draw: Draw): void {
  due.add(draw);
  schedule();
}

/** `draw` will not be called (its view is gone, or drew itself). */
export function cancelDraw(draw: Draw): void {
  due.delete(draw);
}

function schedule(): void {
  if (frame || timer || measuring || !due.size) return;
  const wait = nextAt - performance.now();
  if (wait > 1) {
    timer = setTimeout(() => {
      timer = 0;
      schedule();
    }, wait);
  } else {
    frame = requestAnimationFrame(run);
  }
}

function run(): void {
  frame = 0;
  measuring = true;
  const start = performance.now();
  const draws = [...due];
  due.clear();
  for (const draw of draws) {
    try {
      draw();
    } catch (err) {
      console.error("forge widget: a view failed to draw", err);
    }
  }
  afterPaint(() => {
    const end = performance.now();
    measuring = false;
    nextAt = end + Math.min(MAX_WAIT_MS, (end - start) * PACE);
    schedule();
  });
}

// A task queued from an animation frame runs after that frame's style, layout and paint.
function afterPaint(fn: () => void): void {
  if (typeof MessageChannel === "undefined") {
    setTimeout(fn, 0);
    return;
  }
  const channel = new MessageChannel();
  channel.port1.onmessage = () => {
    channel.port1.close();
    fn();
  };
  channel.port2.postMessage(null);
}
