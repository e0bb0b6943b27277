// One stored session, whole: every page of GET /forge/api/sessions/{id}/messages to the end.
// Turns are drawn by the cell widget's TurnView from the same snapshot ops; messages a
// compaction superseded are greyed and marked, each boundary is a divider, a replayed turn
// says so.
import { h } from '../render/dom.js';
import { count, money } from '../render/words.js';
import { TurnView } from '../render/view.js';
import { NO_HOST } from './adapter';
import { ForgeApi, IBoundary, ISession, modelOf } from './api';
import { Block, BlockBuilder } from './historyBlocks';
import { Op } from './protocol';
import { ago, basename } from './time';

export class HistoryView {
  readonly el: HTMLElement;

  constructor(private readonly api: ForgeApi, onBack: () => void, private readonly onOpen: (id: string) => void) {
    this.headEl = h('div', { class: 'forge-panel-history-head' });
    this.bodyEl = h('div', { class: 'forge-panel-history-body', 'data-testid': 'history-body' });
    this.noteEl = h('div', { class: 'forge-panel-note', 'data-testid': 'history-note' });
    this.el = h('div', { class: 'forge-panel-history', 'data-testid': 'history' },
      h('button', { type: 'button', class: 'forge-button forge-panel-back', 'data-testid': 'history-back', onclick: onBack },
        '← Sessions'),
      this.headEl, this.bodyEl, this.noteEl);
  }

  async open(session: ISession): Promise<void> {
    const generation = ++this.generation;
    this.el.dataset.sessionId = session.id;
    this.el.dataset.complete = 'false';
    this.head(session);
    this.bodyEl.replaceChildren();
    this.superseding = false;
    let builder: BlockBuilder | null = null;
    let cursor: string | null = null;
    let seen = 0;
    try {
      do {
        this.noteEl.textContent = `Loading… ${count(seen)} of ${count(session.messages)} messages`;
        const page = await this.api.messages(session.id, cursor);
        if (generation !== this.generation) {
          return; // another session was opened meanwhile
        }
        builder = builder || new BlockBuilder(page.boundaries);
        this.draw(builder.add(page.messages));
        seen += page.messages.length;
        cursor = page.next_cursor;
      } while (cursor !== null);
      this.draw(builder ? builder.finish() : []);
      this.noteEl.textContent = seen ? '' : 'This session has no messages yet.';
      this.el.dataset.complete = 'true';
    } catch (err) {
      if (generation === this.generation) {
        this.noteEl.textContent = (err as Error).message;
        this.noteEl.dataset.level = 'error';
      }
    }
  }

  /** Say why a session could not be shown (it was deleted, the server is gone…). */
  fail(message: string): void {
    this.generation++;
    this.noteEl.textContent = message;
    this.noteEl.dataset.level = 'error';
  }

  private head(s: ISession): void {
    const bits = [
      s.notebook ? h('span', { title: s.notebook }, basename(s.notebook)) : null,
      modelOf(s) ? h('span', {}, modelOf(s)) : null,
      h('span', {}, ago(s.updated)),
      h('span', { 'data-testid': 'history-cost' }, money(s.cost))
    ];
    const parent = s.parent_id ? h('button', {
      type: 'button', class: 'forge-panel-link', 'data-testid': 'history-parent',
      onclick: () => this.onOpen(s.parent_id!)
    }, s.relation === 'subtask' ? 'subtask of its parent session' : 'forked from its parent session') : null;
    this.headEl.replaceChildren(
      h('div', { class: 'forge-panel-history-title', 'data-testid': 'history-title' }, s.title || s.name || 'Untitled session'),
      h('div', { class: 'forge-panel-session-meta' }, bits, parent));
    delete this.noteEl.dataset.level;
  }

  private draw(blocks: Block[]): void {
    for (const b of blocks) {
      const superseded = b.kind !== 'boundary' && Boolean(b.superseded);
      const first = superseded && !this.superseding; // said once, where the run begins
      this.superseding = superseded;
      this.bodyEl.append(blockEl(b, first));
    }
  }

  private readonly headEl: HTMLElement;
  private readonly bodyEl: HTMLElement;
  private readonly noteEl: HTMLElement;
  private generation = 0;
  private superseding = false; // the last block drawn was superseded
}

/** One block of a stored timeline as the history and the chat's earlier turns draw it;
 * ``tagged``: this block begins a superseded run, so it says "superseded by compaction". */
export function blockEl(b: Block, tagged = true): HTMLElement {
  if (b.kind === 'boundary') {
    return divider(b.boundary);
  }
  const el = b.kind === 'prompt'
    ? h('div', { class: 'forge-panel-prompt', 'data-testid': 'history-prompt', 'data-message-id': b.message.id },
      h('span', { class: 'forge-panel-origin' }, 'You'),
      h('div', { class: 'forge-panel-prompt-text' }, b.text))
    : turnEl(b.ops, b.messages.find(m => m.replayed)?.replayed ?? null);
  if (!b.superseded) {
    return el;
  }
  return h('div', { class: 'forge-panel-superseded', 'data-superseded': 'true' },
    tagged ? h('span', { class: 'forge-panel-superseded-tag', 'data-testid': 'superseded-tag' },
      'superseded by compaction') : null,
    el);
}

function turnEl(ops: Op[], replayed: string | null): HTMLElement {
  const host = h('div', { class: 'forge-panel-history-turn', 'data-testid': 'history-turn' });
  if (replayed) {
    // a turn written again from its recording (no model was asked), as its cell's record says
    host.append(h('span', { class: 'forge-panel-replayed-tag', 'data-testid': 'replayed-tag' }, replayed));
  }
  // A finished turn: one snapshot, one draw, and no timers left behind.
  const view = new TurnView(host, NO_HOST);
  view.onMessage({ kind: 'snapshot', seq: 0, ops });
  view.draw();
  view.dispose();
  return host;
}

function divider(b: IBoundary): HTMLElement {
  const tokens = b.tokens_before !== null && b.tokens_after !== null
    ? ` · ${count(b.tokens_before)} → ${count(b.tokens_after)} tokens` : '';
  return h('div', { class: 'forge-panel-boundary', 'data-testid': 'compaction-boundary', role: 'separator' },
    h('span', { class: 'forge-panel-boundary-label' },
      `${b.auto ? 'Compaction boundary (automatic)' : 'Compaction boundary'}${tokens}`,
      b.reason ? ` — ${b.reason}` : ''));
}
