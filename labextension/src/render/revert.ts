// "Revert to here" on a finished turn (issue 28, item 5): the button a TurnView shows in its
// header — in the side panel, and in a cell whose live view outlived its run — and the one the
// labextension adds to a %%forge cell's record (../actions/revert.ts). Reverting needs a
// notebook and its kernel: the labextension sets the reverter (it asks the person what to take
// back, then runs `%forge revert` in the kernel); without one (the standalone widget) no button.
import { h } from "./dom.js";

/** Which turn: its prompt's message id, or the %%forge cell whose latest turn it is. */
export interface RevertTarget {
  message_id?: string;
  cell_id?: string;
}

export type TurnReverter = (from: HTMLElement, target: RevertTarget) => void;

let reverter: TurnReverter | null = null;

export function setTurnReverter(fn: TurnReverter | null): void {
  reverter = fn;
}

export function canRevert(): boolean {
  return reverter !== null;
}

export const REVERT_LABEL = "Revert to here";

/** The button; its label is drawn by CSS from data-label, so it is no text of the turn. */
export function revertButton(target: () => RevertTarget | null): HTMLButtonElement {
  const button = h("button", {
    type: "button", class: "forge-revert", "data-testid": "revert-turn", "data-label": REVERT_LABEL,
    "aria-label": REVERT_LABEL,
    title: "Take back what this turn and the later ones changed: the files and cells, the conversation, or both",
  }) as HTMLButtonElement;
  button.onclick = () => {
    const t = target();
    if (t && reverter) reverter(button, t);
  };
  // A property, not an attribute: markup in an output (the record is untrusted HTML) cannot
  // set it, so this button is told from anything a turn's content could draw.
  Object.defineProperty(button, FORGE_CONTROL, { value: true });
  return button;
}

/** The property forge's own controls in an output carry (the record's Revert button). */
export const FORGE_CONTROL = "forgeControl";

/** Whether `el` is one of forge's own controls, not markup of the output's. */
export function isForgeControl(el: Element): boolean {
  return (el as unknown as Record<string, unknown>)[FORGE_CONTROL] === true;
}

const MESSAGE_ID = /^msg_[A-Za-z0-9]{1,100}$/;
const CELL_ID = /^[A-Za-z0-9_-]{1,100}$/;

/** The `%forge revert` line for `target` (ids from a page anyone could have written: only
 * their shapes pass), or null. */
export function revertLine(target: RevertTarget, mode: "code" | "conversation" | "both"): string | null {
  if (target.message_id && MESSAGE_ID.test(target.message_id)) {
    return `%forge revert ${target.message_id} --${mode}`;
  }
  if (target.cell_id && CELL_ID.test(target.cell_id)) {
    return `%forge revert --cell ${target.cell_id} --${mode}`;
  }
  return null;
}
