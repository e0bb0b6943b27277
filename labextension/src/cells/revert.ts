// "Revert to here", the cells' part (forge_jupyter/session/revert.py): the kernel sends the
// cell changes of the turns taken back, newest first, each with its checkpoint; the page takes
// each back through JupyterLab's model as Reject does (an inserted cell deleted, an edited
// cell's source restored, a deleted cell re-inserted whole, a moved cell moved back) — but only
// where the cell still holds what the agent left: a cell the person changed since is left as it
// is, and said so. The changes' review marks go with them (there is nothing left to review).
import type { NotebookPanel } from '@jupyterlab/notebook';

import type { CellsReverted, RevertCells, RevertOutcome, RevertStep } from '../protocol.generated';
import { indexOf } from './apply';
import { deletedOf, KEY, markOf, setDeleted } from './marks';

/** The review mark of cell `i` without the changes taken back (gone when none is left). */
function unmark(nb: NotebookPanel, i: number, taken: Set<string>): void {
  const shared = nb.content.model!.cells.get(i).sharedModel;
  const mark = markOf(shared.getMetadata(KEY));
  if (!mark || !mark.changes.some(c => taken.has(c))) {
    return;
  }
  const changes = mark.changes.filter(c => !taken.has(c));
  if (!changes.length) {
    shared.deleteMetadata(KEY);
  } else {
    shared.setMetadata(KEY, { ...mark, changes, after: shared.getSource() } as never);
  }
}

function step(nb: NotebookPanel, s: RevertStep, taken: Set<string>): RevertOutcome {
  const model = nb.content.model!;
  const shared = model.sharedModel;
  const said = (outcome: RevertOutcome['outcome'], detail = ''): RevertOutcome =>
    ({ change_id: s.change_id, outcome, detail });
  const i = indexOf(nb, s.cell_id);
  const cell = i >= 0 ? model.cells.get(i) : null;
  const source = cell?.sharedModel.getSource();
  if (s.edit === 'delete') {
    if (cell) {
      return said('already');
    }
    if (!s.cell) {
      return said('missing', 'its content was not kept');
    }
    let at = Math.min(Math.max(s.from_index, 0), model.cells.length);
    const previous = s.previous ? indexOf(nb, s.previous) : -1;
    if (previous >= 0) {
      at = previous + 1; // after the cell it followed, wherever that is now
    }
    shared.transact(() => {
      setDeleted(nb, deletedOf(nb).filter(d => !taken.has(d.change)));
      shared.insertCell(at, s.cell as never);
    });
    return said('restored');
  }
  if (!cell) {
    // an inserted cell already gone (rejected in review, or deleted): nothing to take back
    return s.edit === 'insert' ? said('already') : said('missing');
  }
  if (s.edit === 'insert') {
    if (source !== s.after) {
      return said('changed');
    }
    shared.transact(() => shared.deleteCell(i));
    return said('restored');
  }
  if (s.edit === 'edit') {
    if (s.before !== null && source === s.before) {
      return said('already');
    }
    if (source !== s.after || s.before === null) {
      return said('changed');
    }
    const before = s.before;
    shared.transact(() => {
      cell.sharedModel.setSource(before);
      unmark(nb, i, taken);
    });
    return said('restored');
  }
  // move: back to where it was
  const to = Math.min(Math.max(s.from_index, 0), model.cells.length - 1);
  if (i === to) {
    return said('already');
  }
  shared.transact(() => {
    unmark(nb, i, taken);
    shared.moveCell(i, to);
  });
  return said('restored');
}

/** Take back the steps of one `revert-cells` in `nb` and say how each went (never throws). */
export function revertCells(nb: NotebookPanel, msg: RevertCells): CellsReverted {
  const reply: CellsReverted = { type: 'cells-reverted', request_id: msg.request_id, ok: false, error: '', outcomes: [] };
  if (!nb.content.model) {
    return { ...reply, error: 'the notebook is not loaded in the page yet' };
  }
  if (nb.content.model.readOnly) {
    return { ...reply, error: 'the notebook is read-only in the page' };
  }
  const taken = new Set(msg.steps.map(s => s.change_id));
  for (const s of msg.steps) {
    try {
      reply.outcomes.push(step(nb, s, taken));
    } catch (err) {
      console.warn('forge: a cell could not be reverted', err);
      reply.outcomes.push({ change_id: s.change_id, outcome: 'missing', detail: String(err).slice(0, 200) });
    }
  }
  // the deleted cells taken back that were back already: no longer listed for review
  setDeleted(nb, deletedOf(nb).filter(d => !taken.has(d.change)));
  return { ...reply, ok: true };
}
