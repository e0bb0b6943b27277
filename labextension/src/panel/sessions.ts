// The store's sessions: a search box (titles, names and message text), pages of the newest
// activity first ("More" until the API's next_cursor is null), forks and subtasks nested under
// the session they branched from. Titles and notebook names are data: textContent only.
import { h } from '../render/dom.js';
import { money } from '../render/words.js';
import { ForgeApi, ISession, modelOf } from './api';
import { ago, basename } from './time';

const SEARCH_DELAY_MS = 250;

export class SessionList {
  readonly el: HTMLElement;

  constructor(private readonly api: ForgeApi, private readonly onOpen: (s: ISession) => void) {
    this.search = h('input', {
      type: 'search', class: 'forge-panel-search', 'data-testid': 'sessions-search',
      placeholder: 'Search titles and messages…', 'aria-label': 'Search sessions'
    }) as HTMLInputElement;
    this.search.addEventListener('input', () => {
      clearTimeout(this.timer);
      this.timer = window.setTimeout(() => void this.reload(), SEARCH_DELAY_MS);
    });
    this.listEl = h('div', { class: 'forge-panel-session-list', 'data-testid': 'sessions-list', role: 'list' });
    this.moreEl = h('button', {
      type: 'button', class: 'forge-button forge-panel-more', 'data-testid': 'sessions-more',
      hidden: true, onclick: () => void this.more()
    }, 'More') as HTMLButtonElement;
    this.noteEl = h('div', { class: 'forge-panel-note', 'data-testid': 'sessions-note' });
    this.el = h('div', { class: 'forge-panel-sessions' },
      h('div', { class: 'forge-panel-searchbar' }, this.search,
        h('button', {
          type: 'button', class: 'forge-button', title: 'Read the sessions again',
          'data-testid': 'sessions-refresh', onclick: () => void this.reload()
        }, 'Refresh')),
      this.listEl, this.moreEl, this.noteEl);
  }

  /** The first page again, for the search box's text. */
  async reload(): Promise<void> {
    this.loaded = [];
    this.cursor = null;
    this.generation++;
    await this.more(true);
  }

  private async more(first = false): Promise<void> {
    const generation = this.generation;
    const q = this.search.value.trim();
    this.moreEl.disabled = true;
    this.noteEl.textContent = 'Loading…';
    try {
      const page = await this.api.sessions(q, first ? null : this.cursor);
      if (generation !== this.generation) {
        return; // a newer search replaced this one
      }
      this.loaded.push(...page.sessions);
      this.cursor = page.next_cursor;
      this.noteEl.textContent = this.loaded.length ? '' :
        q ? `No session mentions “${q}”.` : 'No sessions in the store yet: send a prompt.';
    } catch (err) {
      if (generation === this.generation) {
        this.noteEl.textContent = (err as Error).message;
        this.noteEl.dataset.level = 'error';
      }
      return;
    } finally {
      this.moreEl.disabled = false;
    }
    delete this.noteEl.dataset.level;
    this.moreEl.hidden = this.cursor === null;
    this.render();
  }

  private render(): void {
    const ids = new Set(this.loaded.map(s => s.id));
    const children = new Map<string, ISession[]>();
    const roots: ISession[] = [];
    for (const s of this.loaded) {
      if (s.parent_id && ids.has(s.parent_id) && s.parent_id !== s.id) {
        const list = children.get(s.parent_id) || [];
        list.push(s);
        children.set(s.parent_id, list);
      } else {
        roots.push(s);
      }
    }
    const seen = new Set<string>(); // a cycle in bad data must not loop
    const node = (s: ISession, depth: number): HTMLElement => {
      seen.add(s.id);
      const kids = (children.get(s.id) || []).filter(c => !seen.has(c.id));
      return h('div', { class: 'forge-panel-session-node', 'data-depth': String(depth) },
        this.row(s),
        kids.length ? h('div', { class: 'forge-panel-session-children', 'data-testid': 'session-children' },
          kids.map(c => node(c, depth + 1))) : null);
    };
    this.listEl.replaceChildren(...roots.map(s => node(s, 0)));
  }

  private row(s: ISession): HTMLElement {
    const title = s.title || s.name || 'Untitled session';
    const meta = [
      s.title && s.name ? h('span', { class: 'forge-panel-session-name' }, s.name) : null,
      s.notebook ? h('span', { class: 'forge-panel-session-notebook', title: s.notebook }, basename(s.notebook)) : null,
      modelOf(s) ? h('span', { class: 'forge-panel-session-model' }, modelOf(s)) : null,
      h('span', { class: 'forge-panel-session-when', title: s.updated ? new Date(s.updated * 1000).toLocaleString() : '' },
        ago(s.updated)),
      h('span', { class: 'forge-panel-session-cost', 'data-testid': 'session-cost' }, money(s.cost))
    ];
    return h('button', {
      type: 'button', class: 'forge-panel-session', role: 'listitem', 'data-testid': 'session-row',
      'data-session-id': s.id, 'data-relation': s.relation || '', onclick: () => this.onOpen(s)
    },
    h('span', { class: 'forge-panel-session-title', 'data-testid': 'session-title' },
      s.relation ? h('span', { class: 'forge-panel-session-relation' }, s.relation === 'fork' ? 'fork' : 'subtask') : null,
      title),
    h('span', { class: 'forge-panel-session-meta' }, meta));
  }

  private readonly search: HTMLInputElement;
  private readonly listEl: HTMLElement;
  private readonly moreEl: HTMLButtonElement;
  private readonly noteEl: HTMLElement;
  private loaded: ISession[] = [];
  private cursor: string | null = null;
  private generation = 0;
  private timer = 0;
}
