// The live document for the kernel's notebook_read tool: the kernel asks `read-cells` over the
// panel's comm and the page answers with the notebook's cells as its model holds them — unsaved
// edits included — as nbformat JSON, each output's data cut to what the kernel asked for (the
// kernel summarizes them further; it treats all of it as untrusted data).
import type { NotebookPanel } from '@jupyterlab/notebook';

import type { ReadCells } from '../protocol.generated';
import type { KernelLink } from './kernelLink';

const MAX_CELLS = 50_000; // the kernel refuses more (notebook/panel_protocol.py)

/** A MIME value or a stream's text within `max` characters (nbformat's list of lines too). */
function cutValue(value: unknown, max: number): unknown {
  const text = Array.isArray(value) && value.every(v => typeof v === 'string') ? value.join('') : value;
  if (typeof text === 'string') {
    return text.length > max ? text.slice(0, max) : text;
  }
  const json = JSON.stringify(text ?? null);
  return json.length > max ? `[${json.length} characters of JSON, cut by the page]` : text;
}

/** A raster image's MIME type: its value is base64, useless cut (SVG is text, cut as text). */
function raster(mime: string): boolean {
  return mime.startsWith('image/') && mime !== 'image/svg+xml';
}

function cutOutput(output: unknown, max: number, imageMax: number): unknown {
  if (!output || typeof output !== 'object') {
    return output;
  }
  const o = { ...(output as Record<string, unknown>) };
  if ('text' in o) {
    o.text = cutValue(o.text, max);
  }
  if (o.data && typeof o.data === 'object') {
    const data: Record<string, unknown> = {};
    for (const [mime, value] of Object.entries(o.data as Record<string, unknown>)) {
      data[mime] = cutValue(value, raster(mime) && imageMax ? imageMax : max);
    }
    o.data = data;
  }
  if (Array.isArray(o.traceback)) {
    o.traceback = o.traceback.slice(-200).map(line => cutValue(line, max));
  }
  return o;
}

/** The notebook's cells, as the kernel's `read-cells` asked for them: all of them, or with
 * `imageIds` those cells only, their raster images cut at `imageChars` instead. */
export function notebookCells(nb: NotebookPanel, maxChars: number, imageIds: string[] = [],
                              imageChars = 0): Record<string, unknown>[] {
  const model = nb.content.model;
  const cells: Record<string, unknown>[] = [];
  if (!model) {
    return cells;
  }
  const max = Math.max(0, Math.floor(maxChars)) || 100_000;
  const wanted = new Set(imageIds);
  const imageMax = wanted.size ? Math.max(0, Math.floor(imageChars)) : 0;
  for (let i = 0; i < Math.min(model.cells.length, MAX_CELLS); i++) {
    const cell = model.cells.get(i);
    if (wanted.size && !wanted.has(cell.id)) {
      continue;
    }
    const json = { ...(cell.toJSON() as unknown as Record<string, unknown>) };
    if (Array.isArray(json.outputs)) {
      json.outputs = json.outputs.map(o => cutOutput(o, max, imageMax));
    }
    delete json.attachments; // pasted images in markdown: not the kernel's to read
    cells.push(json);
  }
  return cells;
}

/** Answer one `read-cells` of the kernel behind `link`. */
export function answerReadCells(link: KernelLink, nb: NotebookPanel, msg: ReadCells): void {
  let cells: Record<string, unknown>[] = [];
  try {
    cells = notebookCells(nb, msg.max_chars, msg.image_ids ?? [], msg.image_chars ?? 0);
  } catch (err) {
    console.warn('forge panel: the notebook cells could not be read', err);
  }
  link.send({ type: 'cells', request_id: msg.request_id, cells });
}
