// The review's line diff (src/cells/diff.ts): what a person sees of an agent's cell edit.
import assert from "node:assert/strict";
import { test } from "node:test";

import { diffSummary, lineDiff } from "../src/cells/diff.js";

const shown = (before: string, after: string, max?: number): string[] =>
  lineDiff(before, after, max).map(d => ({ same: " ", del: "-", add: "+" })[d.kind] + d.text);

test("an edited line shows as removed then added, the rest kept", () => {
  assert.deepEqual(shown("import pandas as pd\ndf = load()\ndf.head()", "import pandas as pd\ndf = load(cache=True)\ndf.head()"),
    [" import pandas as pd", "-df = load()", "+df = load(cache=True)", " df.head()"]);
});

test("inserted and removed lines in the middle keep their order", () => {
  assert.deepEqual(shown("a\nb\nc\nd", "a\nx\nc\nd\ne"), [" a", "-b", "+x", " c", " d", "+e"]);
  assert.deepEqual(shown("a\nb\nc", "a\nc"), [" a", "-b", " c"]);
});

test("an empty side is all added or all removed", () => {
  assert.deepEqual(shown("", "x = 1\ny = 2"), ["+x = 1", "+y = 2"]);
  assert.deepEqual(shown("x = 1", ""), ["-x = 1"]);
  assert.deepEqual(shown("same", "same"), [" same"]);
});

test("past the table bound the middle is replaced whole, never dropped", () => {
  const before = Array.from({ length: 50 }, (_, i) => `old ${i}`).join("\n");
  const after = Array.from({ length: 50 }, (_, i) => `new ${i}`).join("\n");
  const d = lineDiff(`head\n${before}\ntail`, `head\n${after}\ntail`, 100);
  assert.equal(d.length, 102);
  assert.equal(diffSummary(d), "+50 −50");
  assert.deepEqual([d[0].text, d[101].text], ["head", "tail"]);
});
