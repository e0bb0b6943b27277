// The kernel's cell tools, applied in the page: `edit-cell` changes the notebook through
// JupyterLab's own model (the shared notebook model), so the change is in the notebook's undo
// history and JupyterLab saves it like the person's own edits; forge never writes the file.
// Unless auto-accepted, the change is staged (marks.ts) and answered `cell-edited`.
import type { NotebookPanel } from '@jupyterlab/notebook';

import type { CellBefore, CellEdited, EditCell } from '../protocol.generated';
import { deletedOf, IMark, KEY, markOf, sessionOf, setDeleted } from './marks';

/** Where the cell with `id` is in `nb` (-1: nowhere). */
export function indexOf(nb: NotebookPanel, id: string): number {
  const cells = nb.content.model!.cells;
  for (let i = 0; i < cells.length; i++) {
    if (cells.get(i).id === id) {
      return i;
    }
  }
  return -1;
}

class Refused extends Error {}

function found(nb: NotebookPanel, id: string): number {
  const i = indexOf(nb, id);
  if (i < 0) {
    throw new Refused(`no cell with id '${id}' in this notebook (${nb.context.path.split('/').pop()}): it was ` +
      'deleted, re-created, or is another notebook\'s');
  }
  return i;
}

/** Where an insert goes (an index among the cells) or a move ends (its final index). */
function target(nb: NotebookPanel, msg: EditCell, moving = -1): number {
  const n = nb.content.model!.cells.length;
  if (msg.place === 'start') {
    return 0;
  }
  if (msg.place === 'end' || !msg.anchor_id) {
    return moving < 0 ? n : n - 1;
  }
  const j = found(nb, msg.anchor_id);
  const at = msg.place === 'after' ? j + 1 : j;
  return moving >= 0 && moving < at ? at - 1 : at; // the moving cell leaves its place first
}

interface IApplied {
  id: string;
  index: number;
  before: CellBefore; // what was there: the checkpoint a revert restores (cells/revert.ts)
}

function apply(nb: NotebookPanel, msg: EditCell): IApplied {
  const model = nb.content.model!;
  const shared = model.sharedModel;
  const stage = !msg.auto_accept;
  // Another turn's change to a cell already staged joins its review (the diff stays against
  // the source before the first change); each change keeps the session that made it.
  const merged = (old: IMark | null, extra: Partial<IMark>): IMark => {
    const session = old?.session ?? msg.session_id;
    const sessions: Record<string, string> = old ? Object.fromEntries(old.changes.map(c => [c, sessionOf(old, c)])) : {};
    sessions[msg.change_id] = msg.session_id;
    const mark: IMark = { ...(old ?? {}), ...extra, changes: [...(old?.changes ?? []), msg.change_id], session };
    if (Object.values(sessions).some(s => s !== session)) {
      mark.sessions = sessions;
    }
    return mark;
  };
  if (msg.edit === 'insert') {
    const at = target(nb, msg);
    const metadata = stage ? { [KEY]: merged(null, { inserted: true, after: msg.source }) } : {};
    const cellType = msg.cell_type === 'markdown' ? 'markdown' : 'code';
    shared.transact(() => {
      shared.insertCell(at, { cell_type: cellType, source: msg.source, metadata } as never);
    });
    return { id: model.cells.get(at).id, index: at, before: {} };
  }
  const i = found(nb, msg.cell_id);
  const cell = model.cells.get(i);
  const old = markOf(cell.sharedModel.getMetadata(KEY));
  if (msg.edit === 'edit') {
    const previous = cell.sharedModel.getSource();
    const before = old?.inserted ? undefined : (old?.before ?? previous);
    shared.transact(() => {
      cell.sharedModel.setSource(msg.source);
      if (stage) {
        cell.sharedModel.setMetadata(KEY, merged(old, { before, after: msg.source }) as never);
      }
    });
    return { id: cell.id, index: i, before: { source: previous } };
  }
  if (msg.edit === 'delete') {
    const json = cell.toJSON() as unknown as Record<string, unknown>;
    const previous = i > 0 ? model.cells.get(i - 1).id : undefined;
    shared.transact(() => {
      shared.deleteCell(i);
      if (stage) {
        setDeleted(nb, [...deletedOf(nb), { change: msg.change_id, session: msg.session_id, index: i, previous, cell: json }]);
      }
    });
    return { id: msg.cell_id, index: -1, before: { index: i, previous: previous ?? '', cell: json } };
  }
  const to = target(nb, msg, i);
  shared.transact(() => {
    // marked before the move: the move copies the cell, and model.cells only catches up after
    // the transaction (marking `model.cells.get(to)` here would mark the cell that was there)
    if (stage) {
      const from = old?.inserted ? undefined : (old?.from ?? i);
      cell.sharedModel.setMetadata(KEY, merged(old, { from }) as never);
    }
    if (to !== i) {
      shared.moveCell(i, to);
    }
  });
  return { id: msg.cell_id, index: to, before: { index: i } };
}

/** Apply one `edit-cell` to `nb` and say how it went (never throws). */
export function applyEdit(nb: NotebookPanel, msg: EditCell): CellEdited {
  const reply: CellEdited = {
    type: 'cell-edited', request_id: msg.request_id, ok: false, error: '', cell_id: '', index: -1, staged: false
  };
  if (!nb.content.model) {
    return { ...reply, error: 'the notebook is not loaded in the page yet' };
  }
  if (nb.content.model.readOnly) {
    return { ...reply, error: 'the notebook is read-only in the page' };
  }
  try {
    const done = apply(nb, msg);
    return { ...reply, ok: true, cell_id: done.id, index: done.index, staged: !msg.auto_accept, before: done.before };
  } catch (err) {
    if (!(err instanceof Refused)) {
      console.warn('forge: a cell edit failed', err);
    }
    return { ...reply, error: err instanceof Error ? err.message : String(err) };
  }
}
