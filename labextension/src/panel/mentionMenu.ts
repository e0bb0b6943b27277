// The box's completion of mentions (docs/notebook-context.md, "Pointing at things"): after an
// `@` that starts a word, the kernel's offer (variables, In[N], error, file: paths, cell: ids)
// shows under the box; arrows move, Enter or Tab accepts, Escape closes. The kernel answers
// over the panel's comm (notebook/mentions/complete.py); the text work here is pure.
import { h } from '../render/dom.js';
import type { Completion } from '../protocol.generated';
import type { IEdit } from './boxText';

export type { Completion };

// what a mention may hold as it is typed: a name, In[3], file:some/path.csv, cell:ab-12
const TYPED = /(^|[\s(\[{,;])@([A-Za-z0-9_.:/\[\]-]{0,200})$/;

/** The mention being typed where the caret is: where its `@` is and what follows it. */
export function mentionAt(value: string, caret: number): { start: number; query: string } | null {
  const before = value.slice(0, caret);
  const m = TYPED.exec(before);
  if (!m || before.slice(0, before.length - m[2].length - 1).endsWith('@')) {
    return null; // @@ is a literal @
  }
  return { start: before.length - m[2].length - 1, query: m[2] };
}

/** The box's text with the mention at `start`..`caret` replaced by `@insert`: a space after it,
 * unless it is a folder or `file:` (the person goes on typing the path). */
export function acceptMention(value: string, start: number, caret: number, insert: string): IEdit {
  const open = insert.endsWith('/') || insert.endsWith(':');
  const after = value.slice(caret);
  const text = '@' + insert + (open || /^\s/.test(after) ? '' : ' ');
  return { value: value.slice(0, start) + text + after, caret: start + text.length };
}

export class MentionMenu {
  readonly el: HTMLElement;

  constructor(private readonly onPick: (item: Completion) => void) {
    this.el = h('ul', { class: 'forge-panel-mentions', 'data-testid': 'panel-mentions', role: 'listbox', hidden: true });
  }

  get open(): boolean {
    return !this.el.hidden;
  }

  show(items: Completion[]): void {
    this.items = items;
    this.active = 0;
    this.el.replaceChildren(...items.map((item, i) => h('li', {
      class: 'forge-panel-mention', role: 'option', 'data-testid': 'panel-mention',
      onmousedown: (e: Event) => { e.preventDefault(); this.onPick(item); }
    }, h('span', { class: 'forge-panel-mention-name' }, '@' + item.insert),
    h('span', { class: 'forge-panel-mention-detail' }, item.detail))));
    this.el.hidden = items.length === 0;
    this.mark();
  }

  close(): void {
    this.el.hidden = true;
    this.items = [];
  }

  /** A key while the menu is open: true when the menu used it. */
  key(e: KeyboardEvent): boolean {
    if (!this.open) {
      return false;
    }
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      const n = this.items.length;
      this.active = (this.active + (e.key === 'ArrowDown' ? 1 : n - 1)) % n;
      this.mark();
    } else if ((e.key === 'Enter' && !e.shiftKey) || e.key === 'Tab') {
      this.onPick(this.items[this.active]);
    } else if (e.key === 'Escape') {
      this.close();
    } else {
      return false;
    }
    e.preventDefault();
    e.stopPropagation();
    return true;
  }

  private mark(): void {
    [...this.el.children].forEach((li, i) => {
      li.setAttribute('aria-selected', String(i === this.active));
      li.classList.toggle('forge-active', i === this.active);
    });
  }

  private items: Completion[] = [];
  private active = 0;
}
