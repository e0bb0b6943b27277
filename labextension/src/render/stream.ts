// Markdown that grows while the model writes it, rendered in proportion to what changed.
// Rendering the whole text on every update costs O(length) per frame, O(length²) per answer: a
// 30k-character answer froze the page for seconds. Here the text is split into top-level
// Markdown blocks (marked's lexer); a block followed by another non-blank block can no longer
// change, so its sanitized DOM stays in place and is never rebuilt. Each update lexes and
// renders only the open tail: the last block and the blank lines after it.
// The result is the DOM renderMarkdown(text) gives for the whole text (labextension/test/
// stream.test.ts checks it chunk by chunk), given that each finished piece is balanced HTML:
// marked's own HTML always is; raw HTML from the model that leaves a tag open (`<details>` …
// `</details>` around blocks) keeps the blocks it spans in one piece until it closes.
import { Lexer, type Links, type Token } from "marked";
import { marked, sanitizeHtml } from "./markdown.js";

// Elements without an end tag: they never leave anything open.
const VOID = new Set([
  "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr",
]);
const TAG = /<(\/?)([a-zA-Z][a-zA-Z0-9-]*)\b[^>]*?(\/?)>/g;

/** Adds to `open` (the elements left open, outermost first) what the raw HTML in `tokens` opens
 * and closes. */
export function openTags(tokens: Token[], open: string[] = []): string[] {
  marked.walkTokens(tokens, (t) => {
    if (t.type !== "html") return;
    for (const m of t.raw.matchAll(TAG)) {
      const name = m[2].toLowerCase();
      if (m[1]) {
        const at = open.lastIndexOf(name);
        if (at >= 0) open.length = at;
      } else if (!VOID.has(name)) {
        // `<div/>` opens a div in HTML: the slash closes only in SVG and MathML.
        const foreign = name === "svg" || name === "math" || open.includes("svg") || open.includes("math");
        if (!(m[3] && foreign)) open.push(name);
      }
    }
  });
  return open;
}

/** Top-level tokens grouped into pieces that are balanced HTML each (most pieces: one block). */
export function pieces(tokens: Token[]): Token[][] {
  const out: Token[][] = [];
  let current: Token[] = [];
  const open: string[] = [];
  for (const t of tokens) {
    current.push(t);
    if (!openTags([t], open).length) {
      out.push(current);
      current = [];
    }
  }
  if (current.length) out.push(current);
  return out;
}

const rawOf = (tokens: Token[]): string => tokens.map((t) => t.raw).join("");
const isBlank = (piece: Token[]): boolean => piece.every((t) => t.type === "space");

/** A text part's Markdown, rendered into `el` and kept up to date by `update(text)`. */
export class LiveMarkdown {
  readonly el: HTMLElement;
  /** How many pieces were rendered from HTML in all (the tests and the benchmark read it). */
  rendered = 0;
  private text = "";
  private start = 0; // where the open tail begins in `text`: everything before it is final
  private links: Links = {}; // reference definitions seen in the final part
  private openNodes: Node[] = [];

  constructor(el: HTMLElement) {
    this.el = el;
  }

  update(value: string | null | undefined): void {
    const text = (value || "").replace(/\r\n?/g, "\n"); // what marked's lexer does first
    if (text === this.text) return;
    if (!text.startsWith(this.text)) this.reset(); // replaced, not grown: start over
    this.text = text;
    const lexer = new Lexer(marked.defaults);
    Object.assign(lexer.tokens.links, this.links);
    const tail = text.slice(this.start);
    const tokens = lexer.lex(tail);
    if (this.start > 0 && Object.keys(lexer.tokens.links).some((k) => !(k in this.links))) {
      // A new reference definition can turn `[x]` in a finished block into a link.
      this.reset();
      this.update(value);
      return;
    }
    const all = pieces(tokens);
    // The last block can still change, and so can the one before it: "3" after a list is a
    // paragraph until it grows into "3. ", the list's next item.
    let open = all.length;
    for (let blocks = 0; blocks < 2; blocks++) {
      while (open > 0 && isBlank(all[open - 1])) open--;
      open = Math.max(0, open - 1);
    }
    const openRaw = all.slice(open).map(rawOf).join("");
    const cut = tail.length - openRaw.length; // where the open tail begins
    for (const n of this.openNodes) n.parentNode?.removeChild(n);
    this.openNodes = [];
    if (open > 0 && tail.endsWith(openRaw) && this.settles(tail.slice(0, cut), all.slice(0, open), lexer.tokens.links)) {
      this.append(all.slice(0, open));
      this.start += cut;
      this.links = { ...lexer.tokens.links };
      this.openNodes = this.append(all.slice(open));
    } else {
      this.openNodes = this.append(all);
    }
  }

  // Whether `text` on its own lexes into `final` with the same definitions: then the cut is
  // where one block ends and the next begins. (A reference definition leaves no token, so the
  // tokens alone cannot tell where they lie in the text.)
  private settles(text: string, final: Token[][], links: Links): boolean {
    const lexer = new Lexer(marked.defaults);
    Object.assign(lexer.tokens.links, this.links);
    const again = lexer.lex(text);
    return rawOf(again) === final.map(rawOf).join("")
      && Object.keys(lexer.tokens.links).length === Object.keys(links).length;
  }

  // Pieces are balanced HTML each, so their HTML joined parses as the pieces one by one do:
  // one sanitizer pass for all (each pass parses a new document, its fixed cost).
  private append(pieces: Token[][]): Node[] {
    if (!pieces.length) return [];
    this.rendered += pieces.length;
    const fragment = sanitizeHtml(pieces.map((piece) => marked.parser(piece)).join(""));
    const nodes = [...fragment.childNodes];
    this.el.append(fragment);
    return nodes;
  }

  private reset(): void {
    this.el.replaceChildren();
    this.text = "";
    this.start = 0;
    this.links = {};
    this.openNodes = [];
  }
}
