// The Forge side panel: a chat with the ACTIVE notebook's kernel (its live turns, the prompt
// box, cost totals) and the store's sessions (search, pages, one session's whole history).
// It follows the notebook tracker: each notebook has its KernelLink and LiveTurns, kept while
// the notebook is open, and the chat shows the current one's.
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import type { Message } from '@lumino/messaging'; // (a dependency of @lumino/widgets)
import { Widget } from '@lumino/widgets';

import { h } from '../render/dom.js';
import { ForgeApi, ISession } from './api';
import { CellRecords } from './cellRecords';
import { CostStrip } from './costs';
import { HistoryView } from './history';
import { forgeIcon } from './icon';
import { KernelLink, LinkState } from './kernelLink';
import { applyEdit } from '../cells/apply';
import { applyOutputs } from '../cells/run';
import { revertCells } from '../cells/revert';
import { CellReview, ReviewStrip } from '../cells/review';
import { answerReadCells } from './liveCells';
import { completeMention } from './mentionAsk';
import { LiveTurns } from './liveTurns';
import { IPromptRequest, PromptBox } from './promptBox';
import { forgeCode, KernelMessage } from './protocol';
import { QUEUED, runPrompt } from './runner';
import { SessionList } from './sessions';
import { basename } from './time';
import { Tabs } from './tabs';
import { sizeOnFirstOpen } from './width';

const NOTICES_KEPT = 3;
const READER_MS = 1000; // a scroll this soon after the reader's input is theirs

/** While the kernel runs a cell, a comm to it waits: what the header says meanwhile. */
const BUSY_WORDS = 'kernel busy — a cell is running; the chat connects when it is free';

const STORE_POLL_MS = 3000; // while the kernel is busy, how often the chat reads the store

const STATE_WORDS: Record<LinkState, string> = {
  'no-kernel': 'no kernel',
  unknown: 'connecting…',
  connecting: 'connecting…',
  'not-loaded': 'forge not loaded (the first prompt loads it)',
  attached: 'forge ready'
};

interface INotebookLink {
  link: KernelLink;
  turns: LiveTurns;
  review: CellReview;
}

export class ForgePanel extends Widget {
  constructor(tracker: INotebookTracker | null, readonly api: ForgeApi = new ForgeApi()) {
    super();
    this.id = 'forge-jupyter-panel';
    this.title.icon = forgeIcon;
    this.title.caption = 'Forge';
    this.addClass('forge-panel');

    this.contextEl = h('div', { class: 'forge-panel-context', 'data-testid': 'panel-context' });
    this.noticesEl = h('div', { class: 'forge-panel-notices', 'data-testid': 'panel-notices' });
    this.turnsHost = h('div', { class: 'forge-panel-turns-host' });
    this.scroller = h('div', { class: 'forge-panel-scroller' }, this.noticesEl, this.turnsHost);
    // Only the reader leaves the bottom (a wheel, a key, the scroll bar, a touch): the chat
    // stopped following a fast stream when the answer grew, or an off-screen block settled
    // its height, between the panel's own scroll and its event.
    const byReader = (): void => {
      this.readerAt = performance.now();
    };
    for (const type of ['wheel', 'touchmove', 'keydown', 'pointerdown']) {
      this.scroller.addEventListener(type, byReader, { passive: true });
    }
    this.scroller.addEventListener('scroll', () => {
      const s = this.scroller;
      const atBottom = s.scrollHeight - s.scrollTop - s.clientHeight < 48;
      if (atBottom || performance.now() - this.readerAt < READER_MS) {
        this.stick = atBottom;
      }
    });
    // Stay at the bottom while the reader is there: when the chat's height changed, after the
    // frame's layout and in the same frame (a ResizeObserver), so following costs no layout of
    // its own. Scrolling from a MutationObserver's next frame laid the chat out and painted it
    // twice per update; reading scrollHeight after every change, a layout each time.
    const follow = new ResizeObserver(() => {
      if (this.stick) {
        this.scroller.scrollTop = this.scroller.scrollHeight;
      }
    });
    follow.observe(this.turnsHost);
    follow.observe(this.scroller); // the box below grew, the panel was resized
    this.prompt = new PromptBox(r => void this.send(r), () => this.current?.turns.stopAll(),
      query => this.current ? completeMention(this.current.link, query) : Promise.resolve([]));
    this.costs = new CostStrip(api);
    this.reviewStrip = new ReviewStrip();
    this.sessions = new SessionList(api, s => void this.openHistory(s));
    this.history = new HistoryView(api, () => this.showList(), id => void this.openHistoryId(id));
    this.sessionsPane = h('div', { class: 'forge-panel-pane forge-panel-sessions-pane', 'data-testid': 'panel-sessions' },
      this.sessions.el);
    const chat = h('div', { class: 'forge-panel-pane forge-panel-chat', 'data-testid': 'panel-chat' },
      this.scroller, this.reviewStrip.el, this.costs.el, this.prompt.el);
    this.tabs = new Tabs([['chat', 'Chat', chat], ['sessions', 'Sessions', this.sessionsPane]], key => {
      if (key === 'sessions' && !this.listed) {
        this.listed = true;
        void this.sessions.reload();
      }
    });
    this.node.append(
      h('div', { class: 'forge-panel-header' },
        h('div', { class: 'forge-panel-title' }, 'Forge'), this.contextEl),
      this.tabs.bar, chat, this.sessionsPane);
    this.tabs.select('chat');

    if (tracker) {
      tracker.forEach(nb => this.track(nb));
      tracker.widgetAdded.connect((_, nb) => this.track(nb));
      tracker.currentChanged.connect((_, nb) => this.follow(nb));
      this.follow(tracker.currentWidget);
    } else {
      this.follow(null);
    }
  }

  /** Kernels learn of the panel once a person has opened it — not before: a kernel with a
   * panel attached lets its runs wait for approvals answered there. */
  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    requestAnimationFrame(() => sizeOnFirstOpen(this)); // once laid out: its width is measured
    if (this.shown) {
      return;
    }
    this.shown = true;
    this.refreshCosts();
    for (const entry of this.links.values()) {
      entry.link.enable();
    }
    this.readSession();
    if (this.current && this.current.link.state === 'unknown') {
      void this.current.link.connect(); // forge loaded before this page: attach now
    }
  }

  // -- notebooks ----------------------------------------------------------------------------

  private track(nb: NotebookPanel): INotebookLink {
    let entry = this.links.get(nb);
    if (!entry) {
      const link = new KernelLink(nb.sessionContext);
      if (this.shown) {
        link.enable();
      }
      const records = new CellRecords(this.api, nb);
      entry = {
        link, turns: new LiveTurns(link, this.api, (sid, messages) => void records.restore(sid, messages)),
        review: new CellReview(nb, msg => link.sendWhenAttached(msg)) // recorded once forge is there
      };
      this.links.set(nb, entry);
      const e = entry;
      link.stateChanged.connect((_, state) => this.onState(e, state));
      link.busyChanged.connect(() => e === this.current && this.describe());
      link.received.connect((_, msg) => this.onMessage(e, msg));
      // notebook_read: this notebook's cells for its own kernel, whichever notebook is shown
      link.received.connect((_, msg) => msg.kind === 'read-cells' && answerReadCells(link, nb, msg));
      // the cell tools: the change applied through JupyterLab's model, staged for review
      link.received.connect((_, msg) => {
        if (msg.kind === 'edit-cell' || msg.kind === 'revert-cells') {
          link.send(msg.kind === 'edit-cell' ? applyEdit(nb, msg) : revertCells(nb, msg));
          e.review.schedule();
        } else if (msg.kind === 'cell-outputs') {
          applyOutputs(nb, msg); // notebook_run: the cell's outputs, as they come
        }
      });
      entry.turns.changed.connect(() => e === this.current && this.prompt.setRunning(e.turns.running));
      nb.disposed.connect(() => {
        this.links.delete(nb);
        e.link.dispose();
        if (this.current === e) {
          this.follow(null);
        }
      });
    }
    return entry;
  }

  private follow(nb: NotebookPanel | null): void {
    const entry = nb ? this.track(nb) : null;
    this.current = entry;
    this.notebook = nb;
    this.reviewStrip.follow(entry ? entry.review : null);
    this.turnsHost.replaceChildren(entry ? entry.turns.el : h('div', { class: 'forge-panel-empty' },
      'Open a notebook: the panel follows the active one and runs prompts in its kernel.'));
    this.noticesEl.replaceChildren();
    this.prompt.setInfo(entry?.link.info ?? null);
    this.prompt.setRunning(entry ? entry.turns.running : false);
    this.prompt.status('');
    this.prompt.clearOutput();
    this.describe();
    this.refreshCosts();
    this.readSession();
    if (this.shown && entry && entry.link.state === 'unknown') {
      void entry.link.connect(); // forge loaded before this page: attach now
    }
  }

  private onState(entry: INotebookLink, state: LinkState): void {
    if (entry !== this.current) {
      return;
    }
    this.describe();
    if (state === 'unknown' && this.shown) {
      void entry.link.connect(); // the notebook changed kernels
    } else if (state !== 'attached') {
      this.prompt.setInfo(null);
    }
  }

  private onMessage(entry: INotebookLink, msg: KernelMessage): void {
    if (entry !== this.current) {
      return;
    }
    if (msg.kind === 'info') {
      this.prompt.setInfo(msg);
      this.describe();
      this.refreshCosts();
    } else if (msg.kind === 'turn-end') {
      this.refreshCosts();
    } else if (msg.kind === 'notice') {
      this.noticesEl.append(h('div', {
        class: 'forge-notice', 'data-testid': 'panel-notice', 'data-level': msg.level
      }, msg.message));
      while (this.noticesEl.children.length > NOTICES_KEPT) {
        this.noticesEl.firstElementChild!.remove();
      }
    }
  }

  private describe(): void {
    const entry = this.current;
    const state = entry ? entry.link.state : 'no-kernel';
    this.node.dataset.state = entry ? state : 'no-notebook';
    if (!entry || !this.notebook) {
      this.contextEl.textContent = 'No notebook';
      return;
    }
    const name = basename(this.notebook.context.path);
    const waiting = (state === 'unknown' || state === 'connecting') && entry.link.busy;
    this.node.dataset.busy = String(waiting);
    this.pollStore(waiting);
    this.contextEl.replaceChildren(
      h('span', { class: 'forge-panel-notebook', title: this.notebook.context.path }, name),
      ' · ', h('span', { 'data-testid': 'panel-state' }, waiting ? BUSY_WORDS : STATE_WORDS[state]));
  }

  /** While the kernel is too busy to open the comm, the chat follows the store instead:
   * what a running cell's turn writes shows, without its live steps. */
  private pollStore(on: boolean): void {
    if (!on) {
      clearInterval(this.poll);
      this.poll = undefined;
      return;
    }
    if (this.poll === undefined) {
      this.poll = setInterval(() => {
        const turns = this.current?.turns;
        if (turns?.sessionId) {
          void turns.showSession(turns.sessionId);
        } else {
          this.readSession();
        }
      }, STORE_POLL_MS);
    }
  }

  /** The chat of a notebook its kernel cannot tell about yet (busy, forge not loaded): its
   * session read from the store by the notebook's path. Once attached, the kernel's info
   * names the session (the same, or the one %forge switched to). */
  private readSession(): void {
    const entry = this.current;
    const nb = this.notebook;
    if (!this.shown || !entry || !nb || entry.link.attached || entry.turns.sessionId) {
      return;
    }
    void this.api.notebookSession(nb.context.path).then(s => {
      if (s && !entry.link.attached && !entry.turns.sessionId) {
        void entry.turns.showSession(s.id);
      }
    }, err => console.warn('forge panel: the notebook\'s session could not be read', err));
  }

  private refreshCosts(): void {
    if (!this.shown) {
      return; // read when the panel is first shown
    }
    const info = this.current?.link.info;
    void this.costs.refresh(info?.session_id ?? '', info?.notebook ?? '');
  }

  // -- the prompt box -----------------------------------------------------------------------

  /** The chat of `nb` with `text` put into the box at its caret, focused, not sent (the
   * actions on cells: src/actions/). The panel must be shown first (app.shell.activateById).
   * `warning`, when given, is said under the box (a notebook without a kernel, say). */
  compose(nb: NotebookPanel, text: string, warning = ''): void {
    if (nb !== this.notebook) {
      this.follow(nb); // the tracker follows too, a focus change later
    }
    this.tabs.select('chat');
    this.prompt.status(warning, warning ? 'warning' : 'info');
    this.prompt.insert(text);
    // The command palette gives the focus back to where it was once the command has run:
    // the box takes it again, in the next frame.
    requestAnimationFrame(() => {
      if (!this.node.contains(document.activeElement)) {
        this.prompt.focus();
      }
    });
  }

  /** The notebook the panel follows (null: none open). */
  get followed(): NotebookPanel | null {
    return this.notebook;
  }

  /** Run one line (`%forge revert …`) in `nb`'s kernel as the box runs prompts: queued behind
   * a running cell, forge loaded first if it is not; resolves with what it printed. */
  async runLine(nb: NotebookPanel, code: string): Promise<string> {
    const entry = this.track(nb);
    let out = '';
    await runPrompt(entry.link, code, [], { status: () => undefined, output: text => { out += text; } });
    this.readSession();
    return out;
  }

  /** What the box holds now: an action adds to a draft, never replaces it. */
  get draft(): string {
    return this.prompt.draft;
  }

  private async send(r: IPromptRequest): Promise<void> {
    const entry = this.current;
    if (!entry) {
      this.prompt.status('Open a notebook first: prompts run in its kernel.', 'warning');
      return;
    }
    const here = () => entry === this.current;
    try {
      const code = forgeCode(r.prompt, r.model, r.agent, r.images.map(i => i.image_id));
      this.stick = true;
      let unqueue: (() => void) | null = null;
      try {
        await runPrompt(entry.link, code, r.images, {
          status: (text, level) => {
            if (text === QUEUED && !unqueue) {
              unqueue = entry.turns.queued(r.prompt); // shown until the kernel starts it
            } else if (!text && unqueue) {
              unqueue();
              unqueue = null;
            }
            if (here()) {
              this.prompt.status(text, level);
            }
          },
          output: text => here() && this.prompt.output(text)
        });
      } finally {
        (unqueue as (() => void) | null)?.();
      }
    } catch (err) {
      if (here()) {
        this.prompt.status((err as Error).message, 'error');
      }
    }
  }

  // -- sessions -----------------------------------------------------------------------------

  private async openHistory(s: ISession): Promise<void> {
    this.sessionsPane.replaceChildren(this.history.el);
    await this.history.open(s);
  }

  private async openHistoryId(id: string): Promise<void> {
    try {
      const { session } = await this.api.session(id);
      await this.openHistory(session);
    } catch (err) {
      this.history.fail((err as Error).message);
    }
  }

  private showList(): void {
    this.sessionsPane.replaceChildren(this.sessions.el);
  }

  private readonly links = new Map<NotebookPanel, INotebookLink>();
  private current: INotebookLink | null = null;
  private notebook: NotebookPanel | null = null;
  private readonly contextEl: HTMLElement;
  private readonly noticesEl: HTMLElement;
  private readonly turnsHost: HTMLElement;
  private readonly scroller: HTMLElement;
  private readonly prompt: PromptBox;
  private readonly costs: CostStrip;
  private readonly reviewStrip: ReviewStrip;
  private readonly sessions: SessionList;
  private readonly history: HistoryView;
  private readonly sessionsPane: HTMLElement;
  private readonly tabs: Tabs;
  private poll: ReturnType<typeof setInterval> | undefined;
  private stick = true;
  private readerAt = -Infinity; // when the reader last touched the chat's scroller
  private listed = false;
  private shown = false;
}
