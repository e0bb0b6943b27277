// The chat's past: the notebook's session as the store keeps it, read through the REST API
// (no kernel needed, so it shows while the kernel is busy) and drawn above the live turns —
// the newest messages first, then "Load earlier turns" a page at a time, like the history
// tab. An exchange (a prompt and the turn that answered it) the chat already shows live is
// left out, so a turn is never drawn twice.
import { h } from '../render/dom.js';
import { count } from '../render/words.js';
import { ForgeApi, IBoundary, IStoredMessage } from './api';
import { blockEl } from './history';
import { Block, BlockBuilder, promptText } from './historyBlocks';

export const EARLIER_PAGE = 60; // messages read per page (a few turns of a tool-using agent)

/** What the live part of the chat shows: their message ids and prompts are not drawn again. */
export interface IShown {
  messageIds: Set<string>;
  prompts: Set<string>;
}

export class EarlierTurns {
  readonly el: HTMLElement;

  constructor(private readonly api: ForgeApi, private readonly shown: () => IShown,
    private readonly onRead: (sessionId: string, messages: IStoredMessage[]) => void = () => undefined) {
    this.moreEl = h('button', {
      type: 'button', class: 'forge-button forge-panel-more', 'data-testid': 'panel-load-earlier',
      hidden: true, onclick: () => void this.more()
    }, 'Load earlier turns') as HTMLButtonElement;
    this.noteEl = h('div', { class: 'forge-panel-note', 'data-testid': 'panel-earlier-note' });
    this.bodyEl = h('div', { class: 'forge-panel-earlier-body' });
    this.el = h('div', { class: 'forge-panel-earlier', 'data-testid': 'panel-earlier' },
      this.moreEl, this.noteEl, this.bodyEl);
  }

  /** The session whose past this is ("" for none). */
  get sessionId(): string {
    return this.session;
  }

  get exchanges(): number {
    return this.bodyEl.childElementCount;
  }

  /** Read the newest page of `sessionId` (again only when the session changed). */
  async load(sessionId: string): Promise<void> {
    if (sessionId === this.session) {
      return;
    }
    const generation = ++this.generation;
    this.session = sessionId;
    this.messages = [];
    this.boundaries = [];
    this.start = 0;
    this.bodyEl.replaceChildren();
    this.moreEl.hidden = true;
    this.el.dataset.loaded = 'false';
    if (!sessionId) {
      this.note('');
      return;
    }
    try {
      this.note('Loading this session’s earlier turns…');
      const { session } = await this.api.session(sessionId);
      const start = Math.max(0, session.messages - EARLIER_PAGE);
      const page = await this.api.messages(sessionId, String(start), EARLIER_PAGE);
      if (generation !== this.generation) {
        return; // another session meanwhile
      }
      this.start = start;
      this.messages = page.messages;
      this.boundaries = page.boundaries;
      this.draw();
    } catch (err) {
      if (generation === this.generation) {
        this.note(`Earlier turns could not be read: ${(err as Error).message}`, 'error');
      }
    }
  }

  /** Read what the session gained since it was read (a turn that ran while the chat could
   * not follow it live: the kernel was busy, the comm not open yet). */
  async refresh(): Promise<void> {
    const sessionId = this.session;
    const generation = this.generation;
    if (!sessionId || this.el.dataset.loaded !== 'true' || this.refreshing) {
      return;
    }
    this.refreshing = true;
    try {
      const { session } = await this.api.session(sessionId);
      const have = this.start + this.messages.length;
      if (generation !== this.generation || session.messages <= have) {
        return;
      }
      const page = await this.api.messages(sessionId, String(have), Math.min(500, session.messages - have));
      if (generation !== this.generation || this.start + this.messages.length !== have) {
        return;
      }
      this.messages = [...this.messages, ...page.messages];
      this.boundaries = page.boundaries;
      this.draw();
    } catch (err) {
      console.warn('forge panel: the session could not be read again', err);
    } finally {
      this.refreshing = false;
    }
  }

  /** Leave out what the live part now shows (called when a live turn appears or grows). */
  prune(): void {
    const { messageIds, prompts } = this.shown();
    const exchanges = [...this.bodyEl.children] as HTMLElement[];
    exchanges.forEach((ex, i) => {
      const ids = (ex.dataset.messageIds || '').split(' ').filter(Boolean);
      const answered = ids.length > 1; // the prompt's own id and at least one answer
      const last = i === exchanges.length - 1;
      // A turn that has just begun has only its prompt stored: matched by its text.
      if (ids.some(id => messageIds.has(id)) || (last && !answered && prompts.has(ex.dataset.prompt || ''))) {
        ex.remove();
      }
    });
  }

  private async more(): Promise<void> {
    const sessionId = this.session;
    const generation = this.generation;
    const start = Math.max(0, this.start - EARLIER_PAGE);
    this.moreEl.disabled = true;
    try {
      const page = await this.api.messages(sessionId, String(start), this.start - start);
      if (generation !== this.generation) {
        return;
      }
      this.start = start;
      this.messages = [...page.messages, ...this.messages];
      this.boundaries = page.boundaries;
      const scroller = this.el.closest('.forge-panel-scroller');
      const fromBottom = scroller ? scroller.scrollHeight - scroller.scrollTop : 0;
      this.draw();
      if (scroller) {
        scroller.scrollTop = scroller.scrollHeight - fromBottom; // the reader stays where they were
      }
    } catch (err) {
      this.note(`Earlier turns could not be read: ${(err as Error).message}`, 'error');
    } finally {
      this.moreEl.disabled = false;
    }
  }

  private draw(): void {
    // Above the first prompt read, a turn whose prompt is on the page before: it waits for it.
    let from = 0;
    if (this.start > 0) {
      const first = this.messages.findIndex(isPrompt);
      from = first < 0 ? 0 : first;
    }
    const builder = new BlockBuilder(this.boundaries);
    const blocks = [...builder.add(this.messages.slice(from)), ...builder.finish()];
    this.bodyEl.replaceChildren(...exchanges(blocks));
    this.moreEl.hidden = this.start + from === 0;
    this.moreEl.title = `${count(this.start + from)} earlier messages in this session`;
    this.el.dataset.loaded = 'true';
    this.note('');
    this.prune();
    this.onRead(this.session, this.messages);
  }

  private note(text: string, level?: 'error'): void {
    this.noteEl.textContent = text;
    if (level) {
      this.noteEl.dataset.level = level;
    } else {
      delete this.noteEl.dataset.level;
    }
  }

  private readonly moreEl: HTMLButtonElement;
  private readonly noteEl: HTMLElement;
  private readonly bodyEl: HTMLElement;
  private session = '';
  private refreshing = false;
  private generation = 0;
  private start = 0; // the timeline position of the first message read
  private messages: IStoredMessage[] = [];
  private boundaries: IBoundary[] = [];
}

function isPrompt(m: IStoredMessage): boolean {
  return promptText(m) !== null;
}

/** The blocks grouped by exchange: a prompt (with the boundary before it) and its turns. */
function exchanges(blocks: Block[]): HTMLElement[] {
  const out: HTMLElement[] = [];
  let current: HTMLElement | null = null;
  let ids: string[] = [];
  const open = (): HTMLElement => {
    ids = [];
    const el = h('div', { class: 'forge-panel-exchange', 'data-testid': 'panel-earlier-exchange' });
    out.push(el);
    return el;
  };
  for (const b of blocks) {
    if (b.kind === 'boundary' || (b.kind === 'prompt' && (!current || current.dataset.prompt !== undefined))) {
      current = open();
    }
    current = current || open();
    if (b.kind === 'prompt') {
      current.dataset.prompt = b.text;
      ids.push(b.message.id);
    } else if (b.kind === 'turn') {
      ids.push(...b.messages.map(m => m.id));
    }
    current.dataset.messageIds = ids.join(' ');
    current.append(blockEl(b));
  }
  return out;
}
