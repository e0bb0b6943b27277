// Which cells the panel gives a missed record back to (src/panel/cellRecords.ts): a cell of this
// notebook, still empty, still a %%forge cell, prompted after the last save — and no other.
import assert from "node:assert/strict";
import { test } from "node:test";

import type { NotebookPanel } from "@jupyterlab/notebook";

import type { ForgeApi, IStoredMessage } from "../src/panel/api.js";
import { CellRecords } from "../src/panel/cellRecords.js";

const SAVED = "2026-12-02T05:00:00Z";
const AFTER = Date.parse(SAVED) / 1000 + 60;

interface IStandInCell {
  model: { id: string; type: string; sharedModel: { getSource(): string }; outputs: { length: number; add(o: unknown): void } };
  added: unknown[];
}

function cell(id: string, source: string): IStandInCell {
  const added: unknown[] = [];
  return {
    added,
    model: {
      id, type: "code", sharedModel: { getSource: () => source },
      outputs: { get length() { return added.length; }, add: (o: unknown) => { added.push(o); } },
    },
  };
}

function prompt(cellId: string, pos: number): IStoredMessage {
  return { id: `m${pos}`, role: "user", pos, created_at: AFTER, origin: { cell_id: cellId } } as unknown as IStoredMessage;
}

async function restore(cells: IStandInCell[], messages: IStoredMessage[]): Promise<number[]> {
  const asked: number[] = [];
  const api = {
    record: async (_id: string, pos: number) => { asked.push(pos); return { done: true, data: { "text/html": "<p>the record</p>" } }; },
  } as unknown as ForgeApi;
  const notebook = { context: { contentsModel: { last_modified: SAVED } }, content: { widgets: cells } } as unknown as NotebookPanel;
  await new CellRecords(api, notebook).restore("s1", messages);
  return asked;
}

test("an empty %%forge cell prompted after the save gets its record back", async () => {
  const a = cell("a", "%%forge\nSum the revenue."), b = cell("b", "%%forge -m openai/x\nAgain.");
  assert.deepEqual(await restore([a, b], [prompt("a", 0), prompt("b", 2)]), [0, 2]);
  assert.equal(a.added.length, 1);
  assert.equal(b.added.length, 1);
});

test("a cell rewritten since its prompt is no longer given a turn's record", async () => {
  for (const source of ["df.describe()", "", "%forge status", "%%forgery\nx", "# %%forge\nx", " %%forge\nx"]) {
    const c = cell("a", source);
    assert.deepEqual(await restore([c], [prompt("a", 0)]), [], source);
    assert.equal(c.added.length, 0, source);
  }
});
