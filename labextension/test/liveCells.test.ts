// What the page sends the kernel's notebook_read (src/panel/liveCells.ts): every cell with each
// output's data cut to max_chars; asked with image_ids, those cells only, their raster images
// whole up to image_chars (base64 cut short is no image) while text stays cut.
import assert from "node:assert/strict";
import { test } from "node:test";

import type { NotebookPanel } from "@jupyterlab/notebook";

import { notebookCells } from "../src/panel/liveCells.js";

const PNG = "iVBOR" + "A".repeat(500);
const SVG = "<svg>" + "x".repeat(500) + "</svg>";

function page(): NotebookPanel {
  const cells = ["a", "b"].map((id) => ({
    id,
    toJSON: () => ({
      id, cell_type: "code", source: "plot()", metadata: {}, attachments: { "x.png": {} },
      outputs: [{ output_type: "display_data", metadata: {},
                  data: { "image/png": PNG, "image/svg+xml": SVG, "text/plain": "t".repeat(500) } }],
    }),
  }));
  return { content: { model: { cells: { length: cells.length, get: (i: number) => cells[i] } } } } as unknown as NotebookPanel;
}

function data(cell: Record<string, unknown>): Record<string, string> {
  return ((cell.outputs as Record<string, unknown>[])[0].data) as Record<string, string>;
}

test("every cell, each value cut to max_chars, no attachments", () => {
  const cells = notebookCells(page(), 100);
  assert.deepEqual(cells.map((c) => c.id), ["a", "b"]);
  assert.equal(data(cells[0])["image/png"].length, 100);
  assert.equal(data(cells[0])["text/plain"].length, 100);
  assert.equal("attachments" in cells[0], false);
});

test("asked for a cell's images: that cell only, its raster image whole, text still cut", () => {
  const cells = notebookCells(page(), 100, ["b"], 10_000);
  assert.deepEqual(cells.map((c) => c.id), ["b"]);
  assert.equal(data(cells[0])["image/png"], PNG);
  assert.equal(data(cells[0])["image/svg+xml"].length, 100); // SVG is text: cut as text
  assert.equal(data(cells[0])["text/plain"].length, 100);
});

test("an image larger than image_chars is cut there", () => {
  const [cell] = notebookCells(page(), 100, ["a"], 200);
  assert.equal(data(cell)["image/png"].length, 200);
});
