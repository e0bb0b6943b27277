// The live widget says what the record says: src/render/words.ts on the inputs of
// words.cases.json must give the answers the Python side gave there (model.STATUS_WORDS and
// duration, render.numbers, render.sources). tests/browser/test_widget_words_js.py computes
// those answers afresh and fails when the file is stale.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import type { Tokens } from "../src/protocol.generated.js";
import * as w from "../src/render/words.js";

type Maybe<T> = T | null | undefined;
interface Cases {
  inputs: {
    parts: { time_start?: Maybe<number>; time_end?: Maybe<number> }[];
    seconds: Maybe<number>[];
    money: Maybe<number>[];
    usage: [Partial<Tokens>, Maybe<number>, Maybe<string>][];
    citations: unknown[];
  };
  python: {
    status: Record<string, string>;
    duration: (number | null)[];
    seconds: string[];
    money: string[];
    usage: string[];
    sources: [string, string][];
  };
}

const cases = JSON.parse(readFileSync(join(import.meta.dirname, "words.cases.json"), "utf-8")) as Cases;
const { inputs, python } = cases;

test("status words are the model's", () => {
  assert.deepEqual(w.STATUS_WORDS, python.status);
});

test("durations, seconds, money and usage read as the Python side writes them", () => {
  assert.deepEqual(inputs.parts.map((p) => w.duration(p)), python.duration);
  assert.deepEqual(inputs.seconds.map((s) => w.seconds(s)), python.seconds);
  assert.deepEqual(inputs.money.map((c) => w.money(c)), python.money);
  assert.deepEqual(inputs.usage.map(([t, c, m]) => w.usage(t, c, m)), python.usage);
});

test("cited sources are the Python side's, and nothing from what is not a list", () => {
  assert.deepEqual(w.citedSources(inputs.citations), python.sources);
  assert.deepEqual([null, {}, "x", 3].map((c) => w.citedSources(c)), [[], [], [], []]);
});

test("a reason that repeats its status word is said once", () => {
  assert.deepEqual(w.statusWords("Stopped", "stopped by the user"), ["Stopped", " by the user"]);
  assert.deepEqual(w.statusWords("Stopped", "stopped: another runner"), ["Stopped", ": another runner"]);
  assert.deepEqual(w.statusWords("Error", "the server failed"), ["Error", ": the server failed"]);
  assert.deepEqual(w.statusWords("Stopped", "stoppedness"), ["Stopped", ": stoppedness"]);
});

test("the person reads a tool's output without the lines that stand for an image shown", () => {
  const said = "image/png 572×454, shown to the user";
  const p = { output: `mean 3.5\n[${said}]`, metadata: { displays: [said] } };
  assert.equal(w.displayed(p, true), "mean 3.5");
  assert.equal(w.displayed(p, false), p.output); // no image here: the line says what became of it
  assert.equal(w.displayed({ output: `[${said}]`, metadata: { displays: [said] } }, true), "");
  assert.equal(w.displayed({ output: null, metadata: null }, true), null);
});
