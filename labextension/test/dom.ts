// A DOM for the Node tests of code that renders (jsdom); imported first, before the renderer
// that needs `window` when it loads (DOMPurify binds to it).
import { JSDOM } from "jsdom";

const dom = new JSDOM("<!doctype html><html><body></body></html>");
const g = globalThis as Record<string, unknown>;
for (const key of ["window", "document", "Node", "NodeFilter", "HTMLElement", "DocumentFragment",
  "MutationObserver", "Element"]) {
  g[key] = key === "window" ? dom.window : (dom.window as unknown as Record<string, unknown>)[key];
}
