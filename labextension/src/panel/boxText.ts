// Text put into the prompt box by an action (Fix with Forge, Ask Forge About This Cell) while
// the person may have a draft there: a pure function, so the Node tests pin it.

export interface IEdit {
  value: string;
  caret: number;
}

/** `text` put into the box's `value` where its selection is (replacing what is selected),
 * spaced from the words around it; the caret ends after it. An empty box just holds `text`. */
export function insertAt(value: string, start: number, end: number, text: string): IEdit {
  if (!value.trim()) {
    return { value: text, caret: text.length };
  }
  const from = Math.max(0, Math.min(start, value.length));
  const to = Math.max(from, Math.min(end, value.length));
  const before = value.slice(0, from);
  const after = value.slice(to);
  const lead = before && !/\s$/.test(before) ? ' ' : '';
  if (/^\s/.test(after)) {
    // the draft's own space follows: the caret goes after it, not after a second one
    const word = text.replace(/\s+$/, '');
    return { value: before + lead + word + after, caret: before.length + lead.length + word.length + (word === text ? 0 : 1) };
  }
  const trail = after && !/\s$/.test(text) ? ' ' : '';
  return { value: before + lead + text + trail + after, caret: before.length + lead.length + text.length };
}
