// What the actions on cells put into the panel's box (src/actions/prompts.ts) and how it goes in
// beside a draft (src/panel/boxText.ts).
import assert from "node:assert/strict";
import { test } from "node:test";

import { askText, CELL_ID, fixText, mention, NOT_FIXABLE } from "../src/actions/prompts.js";
import { insertAt } from "../src/panel/boxText.js";
import { acceptMention, mentionAt } from "../src/panel/mentionMenu.js";
import { forgeCode } from "../src/panel/protocol.js";
import { revertLine } from "../src/render/revert.js";

const JUPYTERLAB_ID = "0f6c2a1e-3b5d-4c8e-9a7f-1d2e3f4a5b6c"; // a UUID, as JupyterLab makes them
const NBFORMAT_ID = "a1b2c3d4"; // 8 hex characters, as nbformat makes them

test("Fix mentions the cell by its whole id and asks to fix the error", () => {
  assert.equal(fixText(JUPYTERLAB_ID), `@cell:${JUPYTERLAB_ID} Fix the error in this cell.`);
  assert.equal(fixText(NBFORMAT_ID), "@cell:a1b2c3d4 Fix the error in this cell.");
});

test("Ask mentions each cell once, leaving the caret after a space", () => {
  assert.equal(askText([NBFORMAT_ID], ""), "@cell:a1b2c3d4 ");
  assert.equal(askText([NBFORMAT_ID, "b2", NBFORMAT_ID], ""), "@cell:a1b2c3d4 @cell:b2 ");
  // a cell the draft mentions already is not mentioned again
  assert.equal(askText([NBFORMAT_ID], "why does @cell:a1b2c3d4 fail?"), "");
  assert.equal(askText([NBFORMAT_ID, "b2"], "@cell:a1b2c3d4\ncompare"), "@cell:b2 ");
  // a longer id that starts the same is another cell
  assert.equal(askText([NBFORMAT_ID], "@cell:a1b2c3d4e5"), "@cell:a1b2c3d4 ");
});

test("an id that is not a notebook cell id never reaches the prompt", () => {
  for (const bad of ["", "a b", "a\nb", "x".repeat(65), "id@cell:other", "ünïcode", "a:b", "{name}", "a/b"]) {
    assert.ok(!CELL_ID.test(bad), bad);
    assert.throws(() => mention(bad), /not a notebook cell id/);
    assert.throws(() => fixText(bad), /Copy what you want to ask about/);
    assert.throws(() => askText([NBFORMAT_ID, bad], ""), /not a notebook cell id/);
  }
  assert.equal(mention("A-z_09"), "@cell:A-z_09");
  assert.equal(mention("x".repeat(64)), `@cell:${"x".repeat(64)}`);
});

test("interrupts and failed forge turns are not offered a fix", () => {
  for (const ename of ["KeyboardInterrupt", "ForgeModelError", "ForgeReplayError"]) {
    assert.ok(NOT_FIXABLE.has(ename));
  }
  for (const ename of ["ZeroDivisionError", "NameError", "ValueError", ""]) {
    assert.ok(!NOT_FIXABLE.has(ename));
  }
});

test("an empty box just holds the text, the caret at its end", () => {
  assert.deepEqual(insertAt("", 0, 0, "@cell:a "), { value: "@cell:a ", caret: 8 });
  assert.deepEqual(insertAt("  \n", 1, 1, "@cell:a "), { value: "@cell:a ", caret: 8 });
});

test("a draft is kept: the text goes in at the caret, spaced from the words around it", () => {
  // at the end of a draft
  assert.deepEqual(insertAt("Compare", 7, 7, "@cell:a "), { value: "Compare @cell:a ", caret: 16 });
  // at its start
  assert.deepEqual(insertAt("why?", 0, 0, "@cell:a "), { value: "@cell:a why?", caret: 8 });
  // in the middle of a word's gap, and replacing what is selected
  assert.deepEqual(insertAt("look at this", 7, 7, "@cell:a "), { value: "look at @cell:a this", caret: 16 });
  assert.deepEqual(insertAt("look at this", 8, 12, "@cell:a "), { value: "look at @cell:a ", caret: 16 });
  // a text ending without a space gets one before the next word
  assert.deepEqual(insertAt("and more", 0, 0, "Fix it."), { value: "Fix it. and more", caret: 7 });
  // a caret beyond the text (a stale selection) counts as its end
  assert.deepEqual(insertAt("ab", 9, 9, "@cell:a "), { value: "ab @cell:a ", caret: 11 });
});

test("the mention being typed is found at the caret; @@ and an address are none", () => {
  assert.deepEqual(mentionAt("compare @sal", 12), { start: 8, query: "sal" });
  assert.deepEqual(mentionAt("@", 1), { start: 0, query: "" });
  assert.deepEqual(mentionAt("see @file:data/or", 17), { start: 4, query: "file:data/or" });
  assert.deepEqual(mentionAt("(@In[3", 6), { start: 1, query: "In[3" });
  assert.equal(mentionAt("mail a@b", 8), null);
  assert.equal(mentionAt("a literal @@", 12), null);
  assert.equal(mentionAt("@df and more", 12), null);
});

test("an accepted mention replaces what was typed; a folder leaves the caret in the path", () => {
  assert.deepEqual(acceptMention("compare @sal", 8, 12, "sales"), { value: "compare @sales ", caret: 15 });
  assert.deepEqual(acceptMention("@sa why", 0, 3, "sales"), { value: "@sales why", caret: 6 });
  assert.deepEqual(acceptMention("@fi", 0, 3, "file:"), { value: "@file:", caret: 6 });
  assert.deepEqual(acceptMention("@file:d", 0, 7, "file:data/"), { value: "@file:data/", caret: 11 });
});

test("pasted images are named on the magic's line; an id of another shape is refused", () => {
  assert.equal(forgeCode("what is this?", "", "", ["paste_0123456789"]), "%%forge --panel --image paste_0123456789\nwhat is this?");
  assert.throws(() => forgeCode("x", "", "", ["paste_1 --new"]), /paste it again/);
});

test("Revert to here runs one %forge revert line, for ids of the right shape only", () => {
  assert.equal(revertLine({ message_id: "msg_01ABCxyz" }, "both"), "%forge revert msg_01ABCxyz --both");
  assert.equal(revertLine({ cell_id: NBFORMAT_ID }, "code"), "%forge revert --cell a1b2c3d4 --code");
  for (const bad of ["msg_1 --code", "msg_1\nimport os", "x; y", "", "ses_1", "msg_"]) {
    assert.equal(revertLine({ message_id: bad }, "both"), null, bad);
  }
  for (const bad of ["a b", "a\nb", "$(x)", "x".repeat(101)]) {
    assert.equal(revertLine({ cell_id: bad }, "conversation"), null, bad);
  }
});
