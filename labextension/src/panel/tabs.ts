// Two panes, one shown: a row of tab buttons (role=tab) over them.
import { h } from '../render/dom.js';

export class Tabs {
  readonly bar: HTMLElement;

  constructor(private readonly panes: [string, string, HTMLElement][], private readonly onSelect: (key: string) => void) {
    this.buttons = panes.map(([key, label]) => h('button', {
      type: 'button', class: 'forge-panel-tab', role: 'tab', 'data-testid': `tab-${key}`,
      'data-key': key, onclick: () => this.select(key)
    }, label) as HTMLButtonElement);
    this.bar = h('div', { class: 'forge-panel-tabs', role: 'tablist' }, this.buttons);
  }

  select(key: string): void {
    for (const [k, , pane] of this.panes) {
      pane.hidden = k !== key;
    }
    for (const b of this.buttons) {
      b.setAttribute('aria-selected', String(b.dataset.key === key));
    }
    this.onSelect(key);
  }

  private readonly buttons: HTMLButtonElement[];
}
