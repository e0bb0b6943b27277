// What stays staged for review, kept in the notebook itself so it survives a reload of the page
// (and a save): a cell the agent inserted, edited or moved carries `forge_review` in its
// metadata; a cell it deleted is kept whole in the notebook's own `forge_review` metadata, so
// Reject can put it back. Everything here is read back from a document anyone could have
// written: it is checked for shape before use.
import type { NotebookPanel } from '@jupyterlab/notebook';

export const KEY = 'forge_review';

export type EditKind = 'insert' | 'edit' | 'delete' | 'move';

/** A staged cell: the agent's changes to it since the person last decided. */
export interface IMark {
  changes: string[]; // the change ids (edit-cell's change_id), oldest first
  session: string; // the session whose turn made the first of them
  // each change's session where turns of several sessions changed the cell (two at once:
  // `%%forge --async`, subagents): each decision is recorded in the session that made it
  sessions?: Record<string, string>;
  inserted?: boolean; // the agent inserted it: Reject deletes it
  before?: string; // its source before the agent's first edit: Reject restores it
  from?: number; // its position before the agent moved it: Reject moves it back
  after?: string; // the source the agent left: another one means the person edited it
}

/** A deleted cell kept for Reject: its nbformat JSON and where it was. */
export interface IDeleted {
  change: string;
  session: string;
  index: number;
  previous?: string; // the id of the cell before it: where Reject puts it back, if still there
  cell: Record<string, unknown>;
}

const strs = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

export function markOf(value: unknown): IMark | null {
  if (!value || typeof value !== 'object') {
    return null;
  }
  const v = value as Record<string, unknown>;
  const changes = strs(v.changes);
  if (!changes.length || typeof v.session !== 'string') {
    return null;
  }
  const mark: IMark = { changes, session: v.session };
  if (v.sessions && typeof v.sessions === 'object' && !Array.isArray(v.sessions)) {
    const by = Object.entries(v.sessions as Record<string, unknown>)
      .filter((e): e is [string, string] => changes.includes(e[0]) && typeof e[1] === 'string');
    if (by.length) {
      mark.sessions = Object.fromEntries(by);
    }
  }
  if (v.inserted === true) {
    mark.inserted = true;
  }
  if (typeof v.before === 'string') {
    mark.before = v.before;
  }
  if (typeof v.from === 'number' && Number.isInteger(v.from) && v.from >= 0) {
    mark.from = v.from;
  }
  if (typeof v.after === 'string') {
    mark.after = v.after;
  }
  return mark;
}

/** The session that made `change` of `mark` (the decision is recorded there). */
export function sessionOf(mark: IMark, change: string): string {
  return mark.sessions?.[change] ?? mark.session;
}

/** What the mark stands for, as one word (the review event's `edit`). */
export function kindOf(mark: IMark): EditKind {
  return mark.inserted ? 'insert' : mark.before !== undefined ? 'edit' : 'move';
}

export function deletedOf(nb: NotebookPanel): IDeleted[] {
  const raw = nb.content.model?.sharedModel.getMetadata(KEY) as unknown;
  const list = raw && typeof raw === 'object' ? (raw as Record<string, unknown>).deleted : null;
  if (!Array.isArray(list)) {
    return [];
  }
  return list.filter((d): d is IDeleted => !!d && typeof d === 'object' && typeof d.change === 'string' &&
    typeof d.session === 'string' && typeof d.index === 'number' && !!d.cell && typeof d.cell === 'object');
}

export function setDeleted(nb: NotebookPanel, deleted: IDeleted[]): void {
  const shared = nb.content.model!.sharedModel;
  if (deleted.length) {
    shared.setMetadata(KEY, { deleted } as never);
  } else if (shared.getMetadata(KEY) !== undefined) {
    shared.deleteMetadata(KEY);
  }
}
