// How a call's code is cut for the person (src/render/code.ts): the head and tail of long code,
// the lines of highlighted tokens, which argument of which tool is code in which language.
import "./dom.js";

import assert from "node:assert/strict";
import { test } from "node:test";

import {
  codeBlock, codeLanguage, codeLines, HEAD_LINES, openFold, setHighlighter, splitHeadTail, splitIntoLines, TAIL_LINES,
} from "../src/render/code.js";

test("short code is shown whole; long code keeps its first and last lines", () => {
  assert.deepEqual(splitHeadTail(10), { head: 10, hidden: 0, tail: 0 });
  // folding three lines away would save nothing: shown whole
  assert.deepEqual(splitHeadTail(HEAD_LINES + TAIL_LINES + 3), { head: HEAD_LINES + TAIL_LINES + 3, hidden: 0, tail: 0 });
  assert.deepEqual(splitHeadTail(200), { head: HEAD_LINES, hidden: 200 - HEAD_LINES - TAIL_LINES, tail: TAIL_LINES });
  assert.deepEqual(splitHeadTail(200, 2, 1), { head: 2, hidden: 197, tail: 1 });
});

test("a final newline is not a line of its own", () => {
  assert.deepEqual(codeLines("a\nb\n"), ["a", "b"]);
  assert.deepEqual(codeLines("a\n\nb"), ["a", "", "b"]);
  assert.deepEqual(codeLines(""), [""]);
});

test("a token that spans lines becomes one span per line with its classes", () => {
  const el = document.createElement("div");
  el.innerHTML = '<span class="kw">def</span> f():\n    <span class="str">"""one\ntwo"""</span>\n';
  const lines = splitIntoLines(el.childNodes);
  const html = lines.map((nodes) => nodes.map((n) => (n as Element).outerHTML ?? n.textContent).join(""));
  assert.deepEqual(html, [
    '<span class="kw">def</span> f():',
    '    <span class="str">"""one</span>',
    '<span class="str">two"""</span>',
  ]);
});

test("each builtin tool's code argument has its language; other arguments are not code", () => {
  assert.deepEqual(codeLanguage("python", "code", {}), { language: "python" });
  assert.deepEqual(codeLanguage("sql", "query", {}), { language: "sql" });
  assert.deepEqual(codeLanguage("write", "content", { path: "src/app.ts" }), { path: "src/app.ts" });
  assert.deepEqual(codeLanguage("edit", "new_string", { path: "a.py" }), { path: "a.py" });
  assert.equal(codeLanguage("write", "path", { path: "a.py" }), null);
  assert.equal(codeLanguage("my_tool", "code", {}), null);
});

test("200 lines show the first and the last, the middle folded with its count", () => {
  const code = Array.from({ length: 200 }, (_, i) => `line_${i + 1} = ${i}`).join("\n");
  const block = codeBlock(code, null, "code:p1:code");
  const shown = [...block.querySelectorAll(":scope > .forge-code-line")].map((l) => l.textContent);
  assert.equal(shown[0], "line_1 = 0");
  assert.equal(shown[shown.length - 1], "line_200 = 199");
  assert.equal(shown.length, HEAD_LINES + TAIL_LINES);
  const more = block.querySelector("details")!;
  assert.equal(more.querySelector("summary")!.textContent, `… ${200 - HEAD_LINES - TAIL_LINES} more lines …`);
  assert.equal(more.querySelectorAll(".forge-code-line").length, 0); // built when opened
  openFold(more);
  openFold(more); // opened again (a redraw restoring it): the lines are there once
  const middle = [...more.querySelectorAll(".forge-code-line")].map((l) => l.textContent);
  assert.equal(middle.length, 200 - HEAD_LINES - TAIL_LINES);
  assert.equal(middle[0], `line_${HEAD_LINES + 1} = ${HEAD_LINES}`);
  assert.equal(more.dataset.key, "code:p1:code");
});

test("highlighted code replaces the plain lines and is reused on the next draw", async () => {
  let calls = 0;
  setHighlighter(async (code, _language, el) => {
    calls += 1;
    for (const word of code.split(/(\s+)/)) {
      if (word === "import") {
        const span = document.createElement("span");
        span.className = "tok-keyword";
        span.textContent = word;
        el.append(span);
      } else {
        el.append(word);
      }
    }
  });
  try {
    const first = codeBlock("import time\ntime.sleep(1)", { language: "python" }, "k");
    assert.equal(first.querySelector(".tok-keyword"), null); // plain until the highlighter is done
    await new Promise((resolve) => setTimeout(resolve, 0));
    assert.equal(first.querySelector(".tok-keyword")!.textContent, "import");
    assert.equal(first.dataset.highlighted, "true");
    const again = codeBlock("import time\ntime.sleep(1)", { language: "python" }, "k");
    assert.equal(again.querySelector(".tok-keyword")!.textContent, "import"); // at once: no flash
    assert.equal(calls, 1);
  } finally {
    setHighlighter(null);
  }
});
