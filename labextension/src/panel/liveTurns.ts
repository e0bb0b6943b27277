// The chat of one notebook: its session's earlier turns read from the store (EarlierTurns),
// then the live turns of its kernel — each (a %%forge cell's or a panel prompt's) its prompt
// and a TurnView, the cell widget's own view, fed the same snapshot and batches over the comm
// through the CommModel adapter.
import { Signal } from '@lumino/signaling';

import { h } from '../render/dom.js';
import { TurnView } from '../render/view.js';
import { CommModel } from './adapter';
import { ForgeApi, IStoredMessage } from './api';
import { EarlierTurns, IShown } from './earlierTurns';
import { KernelLink } from './kernelLink';
import { IBatch, ITurn, KernelMessage } from './protocol';

const KEEP = 30; // finished turns kept in the chat of one notebook

interface ILiveTurn {
  id: string;
  el: HTMLElement;
  view: TurnView;
  model: CommModel;
  prompt: string;
  live: boolean;
}

export class LiveTurns {
  readonly el: HTMLElement;
  /** A turn started or ended (the prompt box shows Stop while one runs). */
  readonly changed = new Signal<this, void>(this);

  constructor(private readonly link: KernelLink, api: ForgeApi,
    onRead?: (sessionId: string, messages: IStoredMessage[]) => void) {
    this.emptyEl = h('div', { class: 'forge-panel-empty', 'data-testid': 'panel-empty' },
      'Runs of this notebook appear here as they happen: a prompt sent below, or a %%forge cell.');
    this.earlier = new EarlierTurns(api, () => this.shown(), onRead);
    this.el = h('div', { class: 'forge-panel-turns', 'data-testid': 'panel-turns' }, this.earlier.el, this.emptyEl);
    link.received.connect((_, msg) => this.handle(msg));
    link.lost.connect((_, why) => this.endAll(why));
  }

  get running(): boolean {
    return [...this.turns.values()].some(t => t.live);
  }

  /** Stop every run of this kernel that is still going (the prompt box's Stop). */
  stopAll(): void {
    for (const t of this.turns.values()) {
      if (t.live) {
        t.model.send({ type: 'stop' });
      }
    }
  }

  /** The session whose stored turns the chat shows ("" before one is known). */
  get sessionId(): string {
    return this.earlier.sessionId;
  }

  /** Show the stored turns of `sessionId` above the live ones (the notebook's session). */
  async showSession(sessionId: string): Promise<void> {
    await (sessionId === this.earlier.sessionId ? this.earlier.refresh() : this.earlier.load(sessionId));
    this.emptyEl.hidden = this.earlier.exchanges > 0;
  }

  /** A prompt sent from the box that the kernel has not started yet (it waits behind a
   * running cell): shown, marked queued, until its turn begins; the returned call removes it. */
  queued(prompt: string): () => void {
    const el = h('section', { class: 'forge-panel-queued', 'data-testid': 'panel-queued' },
      h('div', { class: 'forge-panel-prompt' },
        h('span', { class: 'forge-panel-origin' }, 'You'),
        h('div', { class: 'forge-panel-prompt-text' }, prompt)),
      h('span', { class: 'forge-panel-queued-tag' }, 'queued — runs when the kernel is free'));
    this.emptyEl.hidden = true;
    this.el.append(el);
    return () => el.remove();
  }

  handle(msg: KernelMessage): void {
    switch (msg.kind) {
      case 'turn':
        this.snapshot(msg);
        break;
      case 'batch':
        this.batch(msg);
        break;
      case 'turn-end':
        this.ended(msg.turn_id);
        break;
      case 'info':
        if (msg.session_id) {
          void this.showSession(msg.session_id);
        }
        // Turns the kernel no longer runs (their turn-end was lost with a dropped message).
        for (const t of this.turns.values()) {
          if (t.live && !msg.live.includes(t.id) && t.view.synced) {
            this.ended(t.id);
          }
        }
        break;
      default:
        break;
    }
  }

  private snapshot(msg: ITurn): void {
    let turn = this.turns.get(msg.turn_id);
    if (!turn) {
      turn = this.create(msg);
    }
    turn.model.sessionId = msg.session_id || turn.model.sessionId;
    turn.view.onMessage({ kind: 'snapshot', seq: msg.seq, ops: msg.ops });
    this.earlier.prune();
    this.changed.emit();
  }

  private batch(msg: IBatch): void {
    const turn = this.turns.get(msg.turn_id);
    if (!turn) {
      this.link.hello(); // a turn that began before this panel listened: ask for its snapshot
      return;
    }
    if (msg.session_id) {
      turn.model.sessionId = msg.session_id;
    }
    turn.view.onMessage({ kind: 'batch', seq: msg.seq, ops: msg.ops });
    if (msg.ops.some(o => o.op === 'message')) {
      this.earlier.prune(); // an answer the store had when the chat was read
    }
  }

  private shown(): IShown {
    const messageIds = new Set<string>();
    const prompts = new Set<string>();
    for (const t of this.turns.values()) {
      for (const id of t.view.state.messages.keys()) {
        messageIds.add(id);
      }
      prompts.add(t.prompt);
    }
    return { messageIds, prompts };
  }

  private ended(id: string): void {
    const turn = this.turns.get(id);
    if (!turn || !turn.live) {
      return;
    }
    turn.live = false;
    turn.el.dataset.live = 'false';
    turn.view.draw(); // what the last batch changed, now rather than at the next frame
    turn.view.dispose(); // its timers; the DOM stays as the turn's record in the chat
    this.changed.emit();
  }

  /** The kernel is gone: its running turns say so and end here. */
  private endAll(why: string): void {
    for (const t of this.turns.values()) {
      if (t.live) {
        t.view.state.apply({ op: 'notice', message: why, level: 'warning' });
        t.view.state.apply({ op: 'done' });
        this.ended(t.id);
      }
    }
  }

  private create(msg: ITurn): ILiveTurn {
    const model = new CommModel(this.link, msg.turn_id, msg.session_id);
    const host = h('div', { class: 'forge-panel-turn-view' });
    const fromCell = msg.origin !== 'panel';
    const el = h('section', {
      class: 'forge-panel-turn', 'data-testid': 'panel-turn', 'data-turn-id': msg.turn_id,
      'data-origin': fromCell ? 'cell' : 'panel', 'data-live': 'true'
    },
    h('div', { class: 'forge-panel-prompt' },
      h('span', { class: 'forge-panel-origin' }, fromCell ? 'Cell' : 'You'),
      h('div', { class: 'forge-panel-prompt-text', 'data-testid': 'panel-turn-prompt' }, msg.prompt)),
    host);
    const view = new TurnView(host, model);
    const turn: ILiveTurn = { id: msg.turn_id, el, view, model, prompt: msg.prompt, live: true };
    this.turns.set(msg.turn_id, turn);
    this.emptyEl.remove();
    this.el.append(el);
    this.trim(); // (the panel scrolls to a new turn while the reader is at the bottom)
    return turn;
  }

  private trim(): void {
    for (const t of [...this.turns.values()]) {
      if (this.turns.size <= KEEP) {
        break;
      }
      if (!t.live) {
        t.el.remove();
        this.turns.delete(t.id);
      }
    }
  }

  private readonly turns = new Map<string, ILiveTurn>();
  private readonly emptyEl: HTMLElement;
  private readonly earlier: EarlierTurns;
}
