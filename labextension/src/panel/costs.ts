// Cost totals of the notebook's current session, of the notebook and of today, from
// GET /forge/api/costs, in the words the cell widget uses for money (../render/words.ts).
import { h } from '../render/dom.js';
import { count, money } from '../render/words.js';
import { ForgeApi, ITotals } from './api';

export class CostStrip {
  readonly el: HTMLElement;

  constructor(private readonly api: ForgeApi) {
    this.el = h('div', { class: 'forge-panel-costs', 'data-testid': 'panel-costs' });
    this.render(null, null, null, '');
  }

  /** Read the totals again for this session and notebook (either may be ""). */
  async refresh(session: string, notebook: string): Promise<void> {
    const ask = ++this.asked;
    try {
      const costs = await this.api.costs(session, notebook);
      if (ask === this.asked) {
        this.render(costs.session, costs.notebook, costs.today, '');
      }
    } catch (err) {
      if (ask === this.asked) {
        this.render(null, null, null, `Costs unavailable: ${(err as Error).message}`);
      }
    }
  }

  private render(session: ITotals | null, notebook: ITotals | null, today: ITotals | null, error: string): void {
    const figure = (label: string, key: string, t: ITotals | null) => h('span', {
      class: 'forge-panel-cost', 'data-testid': `cost-${key}`,
      title: t ? `${count(t.input_tokens)} in · ${count(t.output_tokens)} out · ${count(t.turns)} turns` +
        (t.unpriced_steps ? ` · ${count(t.unpriced_steps)} model calls without a known price` : '') : ''
    }, h('span', { class: 'forge-panel-cost-label' }, label), ' ',
    h('span', { class: 'forge-panel-cost-value' }, t ? money(t.cost) + (t.unpriced_steps && t.cost !== null ? '+' : '') : '—'));
    this.el.replaceChildren(
      figure('Session', 'session', session), figure('Notebook', 'notebook', notebook),
      figure('Today', 'today', today));
    if (error) {
      this.el.append(h('div', { class: 'forge-panel-error', 'data-testid': 'costs-error' }, error));
    }
  }

  private asked = 0;
}
