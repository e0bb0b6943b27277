// Tiny DOM helpers: elements are built with textContent only; HTML enters solely through
// renderMarkdown (sanitized).

/** An attribute's value; `on…` keys take a listener, false/null/undefined leave it out. */
export type Attr = string | number | boolean | null | undefined | ((event: never) => unknown);
export type Attrs = Record<string, Attr>;
/** A child: nodes, text (numbers as text), nested lists; null/undefined/false are skipped. */
export type Child = Node | string | number | null | undefined | false | Child[];

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K, attrs?: Attrs | null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") el.className = String(value);
    else if (key.startsWith("on")) el.addEventListener(key.slice(2), value as EventListener);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

function append(el: HTMLElement, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : String(child));
  }
}

/** Insert `el` among `parent`'s children ordered by their data-id. */
export function insertSorted(parent: HTMLElement, el: HTMLElement, id: string): void {
  for (const child of parent.children) {
    const childId = (child as HTMLElement).dataset.id;
    if (childId !== undefined && childId > id) {
      parent.insertBefore(el, child);
      return;
    }
  }
  parent.append(el);
}

/** What saveUi keeps: open <details>, input values and focus, by data-key. */
export interface SavedUi {
  open: Map<string, boolean>;
  values: Map<string, string>;
  focus: string | null;
}

/** Remember open <details>, input values and focus under `root` (keyed by data-key). */
export function saveUi(root: HTMLElement): SavedUi {
  const saved: SavedUi = { open: new Map(), values: new Map(), focus: null };
  for (const d of root.querySelectorAll<HTMLDetailsElement>("details[data-key]")) saved.open.set(d.dataset.key!, d.open);
  for (const i of root.querySelectorAll<HTMLInputElement>("input[data-key]")) saved.values.set(i.dataset.key!, i.value);
  const active = document.activeElement as HTMLElement | null;
  if (active && root.contains(active) && active.dataset.key) saved.focus = active.dataset.key;
  return saved;
}

export function restoreUi(root: HTMLElement, saved: SavedUi): void {
  for (const d of root.querySelectorAll<HTMLDetailsElement>("details[data-key]")) {
    if (saved.open.has(d.dataset.key!)) d.open = saved.open.get(d.dataset.key!)!;
  }
  for (const i of root.querySelectorAll<HTMLInputElement>("input[data-key]")) {
    if (saved.values.has(i.dataset.key!)) i.value = saved.values.get(i.dataset.key!)!;
  }
  if (saved.focus) {
    const el = root.querySelector<HTMLElement>(`[data-key="${CSS.escape(saved.focus)}"]`);
    if (el) el.focus();
  }
}
