// The person's review of the agent's staged cell changes (marks.ts) in one notebook: a stripe
// and a bar on each staged cell (who changed it, the diff against its previous source, Accept
// and Reject), the deleted cells kept for Reject, Accept all / Reject all, and the count the
// side panel shows. Each decision goes to the kernel as `cell-reviewed`, recorded in the
// session like an answer to an approval.
//
// Reject restores exactly what was there: an inserted cell is deleted, an edited one gets its
// previous source back, a moved one returns to where it was, a deleted one is re-inserted whole.
// A staged cell the person edits themselves is theirs: the change resolves as accepted with
// their edits (or as rejected when they undid it back to the previous source).
import type { NotebookPanel } from '@jupyterlab/notebook';
import { Signal } from '@lumino/signaling';

import { h } from '../render/dom.js';
import type { CellReviewed } from '../protocol.generated';
import { diffSummary, lineDiff } from './diff';
import { deletedOf, EditKind, IDeleted, IMark, kindOf, KEY, markOf, sessionOf, setDeleted } from './marks';

const WORDS: Record<EditKind, string> = {
  insert: 'Forge inserted this cell',
  edit: 'Forge edited this cell',
  move: 'Forge moved this cell',
  delete: 'Forge deleted a cell'
};

export interface IPending {
  cells: { id: string; index: number; mark: IMark }[];
  deleted: IDeleted[];
}

export class CellReview {
  /** The pending changes changed (count, list). */
  readonly changed = new Signal<this, void>(this);

  constructor(readonly nb: NotebookPanel, private readonly send: (msg: CellReviewed) => void) {
    const later = (): void => this.schedule();
    void nb.context.ready.then(() => {
      nb.content.model?.contentChanged.connect(later);
      nb.content.model?.cells.changed.connect(later);
      this.schedule();
    });
  }

  get count(): number {
    const p = this.pending();
    return p.cells.length + p.deleted.length;
  }

  pending(): IPending {
    const model = this.nb.content.model;
    const cells: IPending['cells'] = [];
    if (model) {
      for (let i = 0; i < model.cells.length; i++) {
        const cell = model.cells.get(i);
        const mark = markOf(cell.sharedModel.getMetadata(KEY));
        if (mark) {
          cells.push({ id: cell.id, index: i, mark });
        }
      }
    }
    return { cells, deleted: model ? deletedOf(this.nb) : [] };
  }

  // -- decisions ------------------------------------------------------------------------------

  accept(cellId: string): void {
    this.decide(cellId, 'accepted');
  }

  reject(cellId: string): void {
    this.decide(cellId, 'rejected');
  }

  acceptDeleted(change: string): void {
    this.decideDeleted(change, 'accepted');
  }

  rejectDeleted(change: string): void {
    this.decideDeleted(change, 'rejected');
  }

  acceptAll(): void {
    this.all('accepted');
  }

  rejectAll(): void {
    this.all('rejected');
  }

  private all(decision: 'accepted' | 'rejected'): void {
    const p = this.pending();
    // rejected from the last cell up, so a restored move lands where it was
    for (const c of [...p.cells].reverse()) {
      this.decide(c.id, decision);
    }
    for (const d of [...p.deleted].sort((a, b) => a.index - b.index)) {
      this.decideDeleted(d.change, decision);
    }
  }

  private decide(cellId: string, decision: 'accepted' | 'rejected' | 'edited'): void {
    const model = this.nb.content.model;
    if (!model) {
      return;
    }
    const shared = model.sharedModel;
    let i = -1;
    for (let k = 0; k < model.cells.length; k++) {
      if (model.cells.get(k).id === cellId) {
        i = k;
      }
    }
    const cell = i >= 0 ? model.cells.get(i) : null;
    const mark = cell ? markOf(cell.sharedModel.getMetadata(KEY)) : null;
    if (!cell || !mark) {
      return;
    }
    shared.transact(() => {
      if (decision === 'rejected' && mark.inserted) {
        shared.deleteCell(i);
        return;
      }
      cell.sharedModel.deleteMetadata(KEY);
      if (decision === 'rejected') {
        if (mark.before !== undefined) {
          cell.sharedModel.setSource(mark.before);
        }
        if (mark.from !== undefined && mark.from !== i) {
          shared.moveCell(i, Math.min(mark.from, model.cells.length - 1));
        }
      }
    });
    for (const change of mark.changes) {
      this.tell(sessionOf(mark, change), [change], cellId, kindOf(mark), decision);
    }
    this.schedule();
  }

  private decideDeleted(change: string, decision: 'accepted' | 'rejected'): void {
    const model = this.nb.content.model;
    const all = deletedOf(this.nb);
    const d = all.find(x => x.change === change);
    if (!model || !d) {
      return;
    }
    model.sharedModel.transact(() => {
      setDeleted(this.nb, all.filter(x => x !== d));
      if (decision === 'rejected') {
        // after the cell it followed, wherever that is now; else at its old position
        let at = Math.min(d.index, model.cells.length);
        for (let k = 0; d.previous && k < model.cells.length; k++) {
          if (model.cells.get(k).id === d.previous) {
            at = k + 1;
          }
        }
        model.sharedModel.insertCell(at, d.cell as never);
      }
    });
    this.tell(d.session, [d.change], String(d.cell.id ?? ''), 'delete', decision);
    this.schedule();
  }

  private tell(session: string, changes: string[], cellId: string, edit: EditKind,
               decision: 'accepted' | 'rejected' | 'edited'): void {
    for (const change of changes) {
      this.send({ type: 'cell-reviewed', session_id: session, change_id: change, cell_id: cellId, edit, decision });
    }
  }

  // -- the page ---------------------------------------------------------------------------

  private timer = 0;

  /** Draw again soon (after a change the kernel asked for). */
  schedule(): void {
    if (!this.timer) {
      this.timer = window.setTimeout(() => {
        this.timer = 0;
        this.refresh();
      }, 30);
    }
  }

  /** Resolve what the person edited themselves, then draw the stripes and bars. */
  refresh(): void {
    const model = this.nb.content.model;
    if (!model || this.nb.isDisposed) {
      return;
    }
    const p = this.pending();
    for (const c of p.cells) {
      const source = model.cells.get(c.index).sharedModel.getSource();
      if (c.mark.after !== undefined && source !== c.mark.after) {
        this.decide(c.id, c.mark.before !== undefined && source === c.mark.before ? 'rejected' : 'edited');
      }
    }
    // A deleted cell that is back (the person pressed undo): nothing to decide any more.
    const ids = new Set(Array.from({ length: model.cells.length }, (_, i) => model.cells.get(i).id));
    for (const d of p.deleted.filter(x => ids.has(String(x.cell.id)))) {
      setDeleted(this.nb, deletedOf(this.nb).filter(x => x.change !== d.change));
      this.tell(d.session, [d.change], String(d.cell.id), 'delete', 'rejected');
    }
    const marks = new Map(this.pending().cells.map(c => [c.id, c.mark]));
    for (const widget of this.nb.content.widgets) {
      this.draw(widget.node, marks.get(widget.model.id) ?? null, widget.model.id,
        () => widget.model.sharedModel.getSource());
    }
    this.changed.emit();
  }

  private draw(node: HTMLElement, mark: IMark | null, cellId: string, source: () => string): void {
    let bar = node.querySelector<HTMLElement>(':scope > .forge-review-bar');
    node.classList.toggle('forge-review-pending', !!mark);
    if (!mark) {
      bar?.remove();
      delete node.dataset.forgeReview;
      return;
    }
    const kind = kindOf(mark);
    node.dataset.forgeReview = kind;
    const key = JSON.stringify([mark, mark.before !== undefined ? source() : '']);
    if (bar && bar.dataset.key === key) {
      return;
    }
    const diff = mark.before !== undefined ? lineDiff(mark.before, source()) : null;
    const fresh = h('div', { class: 'forge-review-bar', 'data-testid': 'review-bar', 'data-kind': kind },
      h('div', { class: 'forge-review-head' },
        h('span', { class: 'forge-review-label' }, WORDS[kind], diff ? ` (${diffSummary(diff)})` : ''),
        h('button', { class: 'forge-review-accept jp-mod-styled', 'data-testid': 'review-accept', type: 'button',
                      title: 'Keep this change', onclick: () => this.accept(cellId) }, 'Accept'),
        h('button', { class: 'forge-review-reject jp-mod-styled', 'data-testid': 'review-reject', type: 'button',
                      title: 'Undo this change: restore what was there', onclick: () => this.reject(cellId) }, 'Reject')),
      diff && h('pre', { class: 'forge-review-diff', 'data-testid': 'review-diff' },
        diff.map(d => h('div', { class: `forge-diff-${d.kind}` }, ({ same: '  ', del: '- ', add: '+ ' })[d.kind] + d.text))));
    fresh.dataset.key = key;
    if (bar) {
      bar.replaceWith(fresh);
    } else {
      node.prepend(fresh);
    }
  }
}

/** The side panel's line for the current notebook: the count, Accept all / Reject all, and the
 * deleted cells (they have no cell of their own to show a bar on). */
export class ReviewStrip {
  readonly el = h('div', { class: 'forge-review-strip', 'data-testid': 'review-strip', hidden: true });
  private review: CellReview | null = null;
  private readonly redraw = (): void => this.draw();

  follow(review: CellReview | null): void {
    this.review?.changed.disconnect(this.redraw);
    this.review = review;
    review?.changed.connect(this.redraw);
    this.draw();
  }

  private draw(): void {
    const r = this.review;
    const p = r ? r.pending() : { cells: [], deleted: [] };
    const n = p.cells.length + p.deleted.length;
    this.el.hidden = !n;
    if (!r || !n) {
      this.el.replaceChildren();
      return;
    }
    this.el.replaceChildren(
      h('div', { class: 'forge-review-strip-head' },
        h('span', { 'data-testid': 'review-count' }, `${n} cell change${n === 1 ? '' : 's'} to review`),
        h('button', { class: 'jp-mod-styled', 'data-testid': 'review-accept-all', type: 'button', onclick: () => r.acceptAll() }, 'Accept all'),
        h('button', { class: 'jp-mod-styled', 'data-testid': 'review-reject-all', type: 'button', onclick: () => r.rejectAll() }, 'Reject all')),
      ...p.deleted.map(d => h('div', { class: 'forge-review-deleted', 'data-testid': 'review-deleted' },
        h('span', {}, `${WORDS.delete} (#${d.index}): `, h('code', {}, firstLine(d.cell.source))),
        h('button', { class: 'jp-mod-styled', type: 'button', onclick: () => r.acceptDeleted(d.change) }, 'Accept'),
        h('button', { class: 'jp-mod-styled', type: 'button', onclick: () => r.rejectDeleted(d.change) }, 'Reject'))));
  }
}

function firstLine(source: unknown): string {
  const text = Array.isArray(source) ? source.join('') : typeof source === 'string' ? source : '';
  const line = text.split('\n').find(l => l.trim()) ?? '';
  return line.length > 60 ? line.slice(0, 59) + '…' : line;
}
