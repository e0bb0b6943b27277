// Keeping the agent's work (issue 28, item 4): a `python` card's "Insert as cell" (its code,
// and what it showed if it ran) and, on each code block of an answer, "Insert" and "Copy".
// Inserting needs a notebook: the labextension sets the inserter (../index.ts); without one
// (the standalone anywidget bundle, VS Code) only Copy is offered. An inserted cell is the
// person's own act, so it is an ordinary cell — not staged for review — and in the undo history.
import { h } from "./dom.js";

/** An nbformat output of the inserted cell (stream, display_data). */
export type CellOutput = Record<string, unknown>;

/** Inserts a code cell after the active cell of the notebook `from` is in (else the current
 * one); false where there is none. */
export type CellInserter = (from: HTMLElement, source: string, outputs: CellOutput[]) => boolean;

let inserter: CellInserter | null = null;

export function setCellInserter(fn: CellInserter | null): void {
  inserter = fn;
}

export function canInsert(): boolean {
  return inserter !== null;
}

export function insertCell(from: HTMLElement, source: string, outputs: CellOutput[] = []): boolean {
  return inserter !== null && inserter(from, source, outputs);
}

/** What a python call showed, as the cell's outputs: its text (stdout and the value, or the
 * traceback) as a stream, and each figure it displayed. */
export function outputsOf(text: string | null, error: string | null,
                          displays: Record<string, unknown>[]): CellOutput[] {
  const outputs: CellOutput[] = [];
  if (text) outputs.push({ output_type: "stream", name: "stdout", text });
  if (error) outputs.push({ output_type: "stream", name: "stderr", text: error });
  for (const data of displays) outputs.push({ output_type: "display_data", data, metadata: {} });
  return outputs;
}

const ACTION = "data-forge-code-action";

/** "Insert" (where a notebook is) and "Copy" on each code block of `fragment` (an answer's
 * sanitized Markdown). Handled by one listener on the document, so a copied node keeps working;
 * the labels are drawn by CSS from data-label, so they are no text of the answer. */
export function addCodeActions(fragment: DocumentFragment): DocumentFragment {
  for (const pre of fragment.querySelectorAll("pre")) {
    const code = pre.querySelector("code");
    if (!code || pre.querySelector(`[${ACTION}]`)) continue;
    pre.classList.add("forge-code-kept");
    // data-forge-code-actions: an attribute the sanitizer never lets model text keep
    // (ALLOW_DATA_ATTR is off), so these controls are known to be ours
    pre.prepend(h("span", { class: "forge-code-actions", "data-forge-code-actions": true },
      canInsert() ? h("button", { type: "button", [ACTION]: "insert", "data-testid": "code-insert",
                                   "data-label": "Insert", "aria-label": "Insert as a cell",
                                   title: "Insert this code as a new cell below the active one" }) : null,
      h("button", { type: "button", [ACTION]: "copy", "data-testid": "code-copy", "data-label": "Copy",
                    "aria-label": "Copy", title: "Copy this code" })));
  }
  return fragment;
}

function onClick(event: MouseEvent): void {
  const button = (event.target as Element | null)?.closest?.(`[${ACTION}]`) as HTMLElement | null;
  const code = button?.closest("pre")?.querySelector("code");
  if (!button || !code) return;
  event.preventDefault();
  event.stopPropagation();
  const text = (code.textContent || "").replace(/\n$/, "");
  if (button.getAttribute(ACTION) === "insert") {
    button.dataset.label = insertCell(button, text) ? "Inserted" : "No notebook open";
  } else {
    void navigator.clipboard?.writeText(text).then(() => { button.dataset.label = "Copied"; },
      () => { button.dataset.label = "Copy failed"; });
  }
}

if (typeof document !== "undefined") document.addEventListener("click", onClick, true);
