// What "Fix with Forge" and "Ask Forge About This Cell" put in the panel's box: mentions of the
// cells (`@cell:<id>`, read by the kernel from the live document: source, outputs, the error's
// traceback) and, for Fix, a one-line request — ready to read, edit and send, never sent.
// Pure functions of strings, so the Node tests pin them.

/** A cell id as nbformat 4.5 allows it; anything else is not put into a prompt. */
export const CELL_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** The request after the mention of a failed cell. */
export const FIX_REQUEST = 'Fix the error in this cell.';

/** The errors "Fix with Forge" is not offered on: an interrupt is the person's own doing, and
 * a failed %%forge turn already says what to do next (asking the model to fix its own refusal
 * goes nowhere). */
export const NOT_FIXABLE = new Set(['KeyboardInterrupt', 'ForgeModelError', 'ForgeReplayError']);

export function mention(cellId: string): string {
  if (!CELL_ID.test(cellId)) {
    throw new Error('forge cannot point at this cell: its id is not a notebook cell id '
      + '(letters, digits, - and _). Copy what you want to ask about into the Forge box instead.');
  }
  return `@cell:${cellId}`;
}

/** The text Fix puts in the box. */
export function fixText(cellId: string): string {
  return `${mention(cellId)} ${FIX_REQUEST}`;
}

/** The text Ask puts in the box: a mention of each cell not mentioned there yet, then a space
 * for the caret ("" when every one is there already). */
export function askText(cellIds: string[], draft: string): string {
  const have = new Set(draft.split(/\s+/));
  const wanted = cellIds.map(mention).filter((m, i, all) => !have.has(m) && all.indexOf(m) === i);
  return wanted.length ? wanted.join(' ') + ' ' : '';
}
