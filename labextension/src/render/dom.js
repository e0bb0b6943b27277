// Tiny DOM helpers: elements are built with textContent only; HTML enters solely through
// renderMarkdown (sanitized).

export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") el.className = value;
    else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : String(child));
  }
}

/** Insert `el` among `parent`'s children ordered by their data-id. */
export function insertSorted(parent, el, id) {
  for (const child of parent.children) {
    if (child.dataset.id !== undefined && child.dataset.id > id) {
      parent.insertBefore(el, child);
      return;
    }
  }
  parent.append(el);
}

/** Remember open <details>, input values and focus under `root` (keyed by data-key). */
export function saveUi(root) {
  const saved = { open: new Map(), values: new Map(), focus: null };
  for (const d of root.querySelectorAll("details[data-key]")) saved.open.set(d.dataset.key, d.open);
  for (const i of root.querySelectorAll("input[data-key]")) saved.values.set(i.dataset.key, i.value);
  const active = document.activeElement;
  if (active && root.contains(active) && active.dataset.key) saved.focus = active.dataset.key;
  return saved;
}

export function restoreUi(root, saved) {
  for (const d of root.querySelectorAll("details[data-key]")) {
    if (saved.open.has(d.dataset.key)) d.open = saved.open.get(d.dataset.key);
  }
  for (const i of root.querySelectorAll("input[data-key]")) {
    if (saved.values.has(i.dataset.key)) i.value = saved.values.get(i.dataset.key);
  }
  if (saved.focus) {
    const el = root.querySelector(`[data-key="${CSS.escape(saved.focus)}"]`);
    if (el) el.focus();
  }
}
