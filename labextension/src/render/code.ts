// Code a tool is about to run, shown so a person can judge it: lines that never wrap mid-token
// (the block scrolls sideways), highlighted by JupyterLab's own highlighter where the
// labextension installed one (setHighlighter, from ../index.ts), plain where it did not (the
// standalone anywidget bundle), and for long code its first and last lines with the middle
// folded behind "… N more lines …" (a <details>, so a redraw keeps it open: ./dom.ts saveUi).
import { h } from "./dom.js";

/** Which language a code argument is written in: a language name, or a file path whose
 * extension says it (write, edit). */
export interface CodeLanguage {
  language?: string;
  path?: string;
}

/** Puts `code`, highlighted for `language`, into `el` (JupyterLab's IEditorLanguageRegistry.highlight). */
export type Highlighter = (code: string, language: CodeLanguage, el: HTMLElement) => Promise<void>;

let highlighter: Highlighter | null = null;

/** The labextension's highlighter; without one, code is shown plain. */
export function setHighlighter(fn: Highlighter | null): void {
  highlighter = fn;
  highlighted.clear();
}

// The argument of each builtin tool that is code, and its language. A tool not named here
// (a custom or MCP tool) shows its long text arguments as plain code blocks.
const CODE_ARGUMENTS: Record<string, Record<string, CodeLanguage | "path">> = {
  python: { code: { language: "python" } },
  sql: { query: { language: "sql" } },
  shell: { code: { language: "shell" } },
  bash: { command: { language: "shell" } },
  write: { content: "path" },
  edit: { old_string: "path", new_string: "path" },
  apply_patch: { input: { language: "diff" } },
  notebook_run: { source: { language: "python" } }, // the cell's source, shown with its ask
};

/** The language of `tool`'s argument `key`, or null where it is not code we know. */
export function codeLanguage(tool: string, key: string, input: Record<string, unknown>): CodeLanguage | null {
  const spec = (CODE_ARGUMENTS[tool] || {})[key];
  if (!spec) return null;
  if (spec !== "path") return spec;
  return typeof input.path === "string" ? { path: input.path } : {};
}

/** Whether a string argument is shown as a block (several lines, or long) rather than inline. */
export function isBlock(value: string): boolean {
  return value.includes("\n") || value.length > 80;
}

export const HEAD_LINES = 14;
export const TAIL_LINES = 8;

/** How long code is shown: its head, how many lines are folded, its tail; nothing is folded
 * when folding would hide only a few lines. */
export interface Split {
  head: number;
  hidden: number;
  tail: number;
}

/** Split `lines` lines into a head, a folded middle and a tail (pure: npm test). */
export function splitHeadTail(lines: number, head = HEAD_LINES, tail = TAIL_LINES): Split {
  if (lines <= head + tail + 3) return { head: lines, hidden: 0, tail: 0 };
  return { head, hidden: lines - head - tail, tail };
}

/** The lines of `code` without the empty one after a final newline. */
export function codeLines(code: string): string[] {
  const lines = code.split("\n");
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/** Cut highlighted nodes (text and token spans, as the highlighter made them) into lines:
 * a token that spans lines (a multi-line string) becomes one span per line, same classes. */
export function splitIntoLines(nodes: Iterable<Node>): Node[][] {
  const lines: Node[][] = [[]];
  const add = (text: string, like: Element | null): void => {
    text.split("\n").forEach((piece, i) => {
      if (i) lines.push([]);
      if (!piece) return;
      if (!like) {
        lines[lines.length - 1].push(document.createTextNode(piece));
      } else {
        const span = like.cloneNode(false) as Element;
        span.textContent = piece;
        lines[lines.length - 1].push(span);
      }
    });
  };
  for (const node of nodes) {
    if (node.nodeType === Node.TEXT_NODE) add(node.textContent || "", null);
    else if (node.nodeType === Node.ELEMENT_NODE) {
      const el = node as Element;
      if (el.children.length === 0) add(el.textContent || "", el);
      else splitIntoLines(el.childNodes).forEach((line, i) => {
        if (i) lines.push([]);
        if (line.length) {
          const wrap = el.cloneNode(false) as Element;
          wrap.append(...line);
          lines[lines.length - 1].push(wrap);
        }
      });
    }
  }
  if (lines.length > 1 && lines[lines.length - 1].length === 0) lines.pop();
  return lines;
}

// Highlighted code by language and text: a redraw of a card (every update of its part)
// reuses it rather than highlighting again and flashing plain text meanwhile.
const highlighted = new Map<string, Node[]>();
const KEEP_HIGHLIGHTED = 64;
// Beyond this the code is shown plain: highlighting parses it whole, on the page's one thread.
const HIGHLIGHT_CHARS = 200_000;

function lineEls(lines: Node[][], from: number, to: number): HTMLElement[] {
  const out: HTMLElement[] = [];
  for (let i = from; i < to; i++) {
    // an empty line keeps its height
    out.push(h("div", { class: "forge-code-line" }, lines[i].map((n) => n.cloneNode(true)), lines[i].length ? null : "\n"));
  }
  return out;
}

function fill(block: HTMLElement, lines: Node[][], key: string): void {
  const split = splitHeadTail(lines.length);
  const head = lineEls(lines, 0, split.head);
  if (!split.hidden) {
    block.replaceChildren(...head);
    return;
  }
  // The folded lines are built when first opened: a card is redrawn whole on every update of
  // its call, and a long file's middle would be rebuilt each time for nobody.
  const middle: HTMLDetailsElement = h("details", {
    class: "forge-code-more", "data-key": key, "data-testid": "code-more",
    ontoggle: () => middle.open && buildFold(middle),
  }, h("summary", { title: "Show every line" }, `… ${split.hidden} more line${split.hidden === 1 ? "" : "s"} …`));
  folded.set(middle, () => middle.append(...lineEls(lines, split.head, split.head + split.hidden)));
  block.replaceChildren(...head, middle, ...lineEls(lines, split.head + split.hidden, lines.length));
}

// A fold's lines, built once, when it is first opened.
const folded = new WeakMap<HTMLDetailsElement, () => void>();

function buildFold(fold: HTMLDetailsElement): void {
  const build = folded.get(fold);
  folded.delete(fold);
  if (build) build();
}

/** Open a fold now (its lines built), not at the toggle event's turn. */
export function openFold(fold: HTMLDetailsElement): void {
  fold.open = true;
  buildFold(fold);
}

/** A code block for `code`; `key` names its fold for ./dom.ts saveUi (unique in the view). */
export function codeBlock(code: string, language: CodeLanguage | null, key: string): HTMLElement {
  const block = h("div", {
    class: "forge-code", "data-testid": "code", "data-language": language?.language || language?.path || "",
  });
  const plain = codeLines(code).map((line) => [document.createTextNode(line)] as Node[]);
  const cacheKey = `${language?.language || ""}\u0000${language?.path || ""}\u0000${code}`;
  const highlight = language && highlighter && code.length <= HIGHLIGHT_CHARS ? highlighter : null;
  const done = highlight ? highlighted.get(cacheKey) : undefined;
  if (done) {
    block.dataset.highlighted = "true";
    fill(block, splitIntoLines(done), key);
    return block;
  }
  fill(block, plain, key);
  if (language && highlight) {
    const into = document.createElement("div");
    highlight(code, language, into).then(() => {
      const nodes = [...into.childNodes];
      highlighted.set(cacheKey, nodes);
      if (highlighted.size > KEEP_HIGHLIGHTED) highlighted.delete(highlighted.keys().next().value!);
      const more = block.querySelector<HTMLDetailsElement>(":scope > details");
      const open = more ? more.open : false;
      fill(block, splitIntoLines(nodes), key);
      const again = block.querySelector<HTMLDetailsElement>(":scope > details");
      if (again && open) openFold(again);
      block.dataset.highlighted = "true";
    }, (err: unknown) => console.warn("forge widget: code not highlighted", err));
  }
  return block;
}
