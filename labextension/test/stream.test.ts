// The live Markdown of a streamed text part (src/render/stream.ts): whatever the chunks, every
// frame is the DOM that rendering the text so far at once gives (renderMarkdown, sanitized),
// and a block that is finished keeps its DOM nodes.
import "./dom.js";
import assert from "node:assert/strict";
import { test } from "node:test";
import { renderMarkdown } from "../src/render/markdown.js";
import { LiveMarkdown } from "../src/render/stream.js";

const FENCE = "```";
const DOCS: Record<string, string> = {
  headings: "# Title\n\nIntro with **bold** and `code`.\n\n## Second\n\nSetext one\n===\n\nSetext two\n---\n\n### Third ###\ntext right after\n",
  fences: `Before.\n\n${FENCE}python\ndef f(x):\n\n    return x * 2\n${FENCE}\n\nBetween.\n\n~~~\nplain ${FENCE} inside\n~~~\n\n    indented code\n\n    more indented\n\nAfter.\n`,
  "open fence": `Start.\n\n${FENCE}js\nconst a = 1;\n\nconst b = [\n  1,\n`,
  lists: "- one\n- two\n  - nested\n  - nested 2\n- three\n\n1. first\n2. second\n\n   continued para\n3. third\n\n- loose\n\n- list\n\nPara after.\n\n* [ ] task\n* [x] done\n",
  tables: "| a | b |\n|---|--:|\n| 1 | 2 |\n| 3 | 4 |\n\nText.\n\n| left | centre |\n|:--|:-:|\n| x | y |\nrow without pipes | z\n\nEnd.\n",
  quotes: "> quoted\n> lines\nlazy continuation\n\n> second\n>\n> > nested\n\n---\n\n***\n\nDone.\n",
  html: "<details>\n<summary>More</summary>\n\nInside **details**.\n\n- item\n\n</details>\n\nAfter <b>bold\n\nstill?</b> and <br> a break.\n\n<div>\nblock\n</div>\n\n<!-- comment -->\n\nend\n",
  references: "See [the docs][d] and [other].\n\nMore text.\n\n[d]: https://example.com/docs \"Docs\"\n\nAnd [d] again.\n\n[other]: https://example.com/other\n",
  crlf: "Line one\r\nline two\r\n\r\n# Head\r\n\r\n- a\r\n- b\r\n",
  xss: "<img src=x onerror=\"alert(1)\">\n\n[click](javascript:alert(2))\n\n<script>alert(3)</script>\n\n<a href=\"javascript:alert(4)\" onclick=\"alert(5)\">x</a>\n\n![pic](https://example.com/p.png)\n\n<iframe src=\"x\"></iframe>\n\n<svg onload=alert(6)><circle/></svg>\n",
};

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function whole(text: string): string {
  const el = document.createElement("div");
  el.append(renderMarkdown(text));
  return el.innerHTML;
}

function chunks(text: string, random: () => number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length;) {
    const n = 1 + Math.floor(random() * (random() < 0.2 ? 40 : 6));
    out.push(text.slice(i, i + n));
    i += n;
  }
  return out;
}

for (const [name, doc] of Object.entries(DOCS)) {
  test(`streamed in random chunks, ${name} renders as the whole text does at every frame`, () => {
    for (let seed = 1; seed <= 12; seed++) {
      const live = new LiveMarkdown(document.createElement("div"));
      let text = "";
      for (const chunk of chunks(doc, rng(seed))) {
        text += chunk;
        live.update(text);
        assert.equal(live.el.innerHTML, whole(text), `seed ${seed}, after ${JSON.stringify(text.slice(-30))}`);
      }
    }
  });
}

test("the whole corpus as one answer: identical, and finished blocks keep their nodes", async () => {
  // (without the open fence, which would take in all that follows)
  const doc = Object.entries(DOCS).filter(([k]) => k !== "open fence").map(([, v]) => v).join("\n\n").repeat(3);
  const live = new LiveMarkdown(document.createElement("div"));
  let removedElements = 0;
  const observer = new MutationObserver((records) => {
    for (const r of records) removedElements += [...r.removedNodes].filter((n) => n.nodeType === 1).length;
  });
  observer.observe(live.el, { childList: true });
  let text = "";
  let updates = 0;
  const parts = chunks(doc, rng(99));
  for (const chunk of parts) {
    text += chunk;
    const before = [...live.el.childNodes];
    live.update(text);
    updates++;
    // Only the tail is ever taken out: what stays is the same nodes, in the same order.
    const kept = before.filter((n) => n.parentNode === live.el);
    assert.deepEqual(kept, before.slice(0, kept.length));
  }
  await new Promise((resolve) => setTimeout(resolve, 0)); // the observer's records
  observer.disconnect();
  assert.equal(live.el.innerHTML, whole(doc));
  const blocks = live.el.children.length;
  assert.ok(blocks > 100, `${blocks} top-level elements`);
  // The open tail is one block (or one raw-HTML span); re-rendering everything would take
  // out every element on every update.
  assert.ok(removedElements < updates * 4, `${removedElements} elements removed over ${updates} updates`);
});

test("a text that is replaced rather than grown is rendered afresh", () => {
  const live = new LiveMarkdown(document.createElement("div"));
  live.update("# One\n\nfirst\n\nsecond");
  live.update("Other *text*\n\n- a");
  assert.equal(live.el.innerHTML, whole("Other *text*\n\n- a"));
  live.update(null);
  assert.equal(live.el.innerHTML, "");
});

test("sanitising applies to every streamed block: no script, handler or javascript: URL", () => {
  const live = new LiveMarkdown(document.createElement("div"));
  let text = "";
  for (const chunk of chunks(DOCS.xss.repeat(2), rng(7))) {
    text += chunk;
    live.update(text);
    for (const el of live.el.querySelectorAll("*")) {
      assert.ok(!["SCRIPT", "IFRAME", "SVG"].includes(el.tagName.toUpperCase()), el.outerHTML);
      for (const attr of el.attributes) {
        assert.ok(!attr.name.startsWith("on"), el.outerHTML);
        assert.ok(!/^\s*javascript:/i.test(attr.value), el.outerHTML);
      }
    }
  }
  assert.ok(live.el.querySelector(".forge-blocked-image"), "a remote image becomes a link");
});
