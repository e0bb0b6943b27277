// The prompt box: a text area (Enter sends, Shift+Enter is a new line), the model and agent
// pickers filled from the kernel's info, Send (Stop while a run of this notebook goes on), a
// status line and what the kernel printed for the prompt.
import { h } from '../render/dom.js';
import { insertAt } from './boxText';
import { acceptMention, Completion, mentionAt, MentionMenu } from './mentionMenu';
import { PastedImages } from './pastedImages';
import type { PanelImage } from '../protocol.generated';
import { IInfo, NAME } from './protocol';

/** The kernel's offer after `@query` (empty when forge is not loaded there). */
export type Completer = (query: string) => Promise<Completion[]>;

export interface IPromptRequest {
  prompt: string;
  model: string; // "" = the kernel's default
  agent: string;
  images: PanelImage[]; // pasted or dropped, sent ahead of the prompt
}

const DEFAULT = ''; // the pickers' first entry: no -m / -a on the magic's line
const MAX_OUTPUT = 20000; // characters of kernel output kept under the box

export class PromptBox {
  readonly el: HTMLElement;

  constructor(private readonly onSend: (r: IPromptRequest) => void, private readonly onStop: () => void,
    private readonly complete: Completer = async () => []) {
    this.input = h('textarea', {
      class: 'forge-panel-input', 'data-testid': 'panel-prompt', rows: '3',
      placeholder: 'Ask forge in this notebook’s kernel… (Enter sends, Shift+Enter: new line)',
      'aria-label': 'Prompt'
    }) as HTMLTextAreaElement;
    this.input.addEventListener('keydown', e => this.onKey(e));
    this.input.addEventListener('input', () => void this.offer());
    this.input.addEventListener('blur', () => this.menu.close());
    this.menu = new MentionMenu(item => this.pick(item));
    this.images = new PastedImages((text, level) => this.status(text, level));
    this.input.addEventListener('paste', e => this.images.take(e.clipboardData?.files) && e.preventDefault());
    this.input.addEventListener('dragover', e => e.dataTransfer?.types.includes('Files') && e.preventDefault());
    this.input.addEventListener('drop', e => this.images.take(e.dataTransfer?.files) && e.preventDefault());
    this.model = h('select', { class: 'forge-panel-select forge-panel-model', 'data-testid': 'panel-model', title: 'Model' }) as HTMLSelectElement;
    this.agent = h('select', { class: 'forge-panel-select', 'data-testid': 'panel-agent', title: 'Agent' }) as HTMLSelectElement;
    this.sendEl = h('button', {
      type: 'button', class: 'forge-button forge-primary forge-panel-send', 'data-testid': 'panel-send',
      onclick: () => this.submit()
    }, 'Send') as HTMLButtonElement;
    this.stopEl = h('button', {
      type: 'button', class: 'forge-button forge-danger forge-panel-stop', 'data-testid': 'panel-stop',
      title: 'Stop the runs of this notebook', onclick: () => this.onStop(), hidden: true
    }, 'Stop') as HTMLButtonElement;
    this.statusEl = h('div', { class: 'forge-panel-status', 'data-testid': 'panel-prompt-status', role: 'status' });
    this.outputEl = h('pre', { class: 'forge-panel-output', 'data-testid': 'panel-kernel-output', hidden: true });
    this.el = h('div', { class: 'forge-panel-promptbox' },
      this.menu.el, this.input, this.images.el,
      h('div', { class: 'forge-panel-controls' }, this.model, this.agent,
        h('span', { class: 'forge-spacer' }), this.stopEl, this.sendEl),
      this.statusEl, this.outputEl);
    this.setInfo(null);
  }

  /** Fill the pickers from the kernel's info (names outside NAME are left out). */
  setInfo(info: IInfo | null): void {
    fill(this.model, info ? info.models : [], info?.model ?? '', 'model');
    fill(this.agent, info ? info.agents : [], info?.agent ?? '', 'agent');
  }

  setRunning(running: boolean): void {
    this.stopEl.hidden = !running;
  }

  status(text: string, level: 'info' | 'warning' | 'error' = 'info'): void {
    this.statusEl.textContent = text;
    this.statusEl.dataset.level = level;
  }

  output(text: string): void {
    const all = (this.outputEl.textContent || '') + text;
    this.outputEl.textContent = all.length > MAX_OUTPUT ? all.slice(-MAX_OUTPUT) : all;
    this.outputEl.hidden = !all;
  }

  clearOutput(): void {
    this.outputEl.textContent = '';
    this.outputEl.hidden = true;
  }

  focus(): void {
    this.input.focus();
  }

  /** What the box holds now (a draft not sent yet). */
  get draft(): string {
    return this.input.value;
  }

  /** Put `text` into the box at its caret, a draft kept around it; the caret after it, focused.
   * Nothing is sent: the person reads it, edits it and presses Enter. */
  insert(text: string): void {
    const box = this.input;
    if (text) {
      const edit = insertAt(box.value, box.selectionStart, box.selectionEnd, text);
      box.value = edit.value;
      box.setSelectionRange(edit.caret, edit.caret);
    }
    box.focus();
  }

  /** After an `@` being typed, what the kernel offers for it (a later keystroke's answer wins). */
  private async offer(): Promise<void> {
    const box = this.input;
    const at = box.selectionStart === box.selectionEnd ? mentionAt(box.value, box.selectionStart) : null;
    const asked = ++this.asked;
    if (!at) {
      this.menu.close();
      return;
    }
    let items: Completion[] = [];
    try {
      items = await this.complete(at.query);
    } catch {
      items = [];
    }
    if (asked === this.asked) {
      this.mention = at;
      this.menu.show(items);
    }
  }

  private pick(item: Completion): void {
    const at = this.mention;
    this.menu.close();
    if (!at) {
      return;
    }
    const box = this.input;
    const edit = acceptMention(box.value, at.start, box.selectionStart, item.insert);
    box.value = edit.value;
    box.setSelectionRange(edit.caret, edit.caret);
    box.focus();
    if (item.insert.endsWith('/') || item.insert.endsWith(':')) {
      void this.offer(); // a folder: what is in it
    }
  }

  private onKey(e: KeyboardEvent): void {
    if (this.menu.key(e)) {
      return;
    }
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      this.submit();
    }
  }

  private submit(): void {
    const prompt = this.input.value;
    if (!prompt.trim()) {
      this.status('Write a prompt first.', 'warning');
      return;
    }
    const model = this.model.value;
    const agent = this.agent.value;
    for (const [what, value] of [['model', model], ['agent', agent]]) {
      if (value !== DEFAULT && !NAME.test(value)) {
        this.status(`The ${what} name is not one the panel sends; pick another.`, 'error');
        return;
      }
    }
    this.input.value = '';
    this.clearOutput();
    this.onSend({ prompt, model, agent, images: this.images.drain() });
  }

  private readonly input: HTMLTextAreaElement;
  private readonly menu: MentionMenu;
  private readonly images: PastedImages;
  private mention: { start: number; query: string } | null = null;
  private asked = 0;
  private readonly model: HTMLSelectElement;
  private readonly agent: HTMLSelectElement;
  private readonly sendEl: HTMLButtonElement;
  private readonly stopEl: HTMLButtonElement;
  private readonly statusEl: HTMLElement;
  private readonly outputEl: HTMLElement;
}

/** The picker's options: the kernel's default first (value ""), then each valid name. */
function fill(select: HTMLSelectElement, names: string[], current: string, what: string): void {
  const chosen = select.value;
  const options = [h('option', { value: DEFAULT }, current ? `${current} (default)` : `default ${what}`)];
  for (const name of names) {
    if (name !== current && NAME.test(name)) {
      options.push(h('option', { value: name }, name));
    }
  }
  select.replaceChildren(...options);
  select.value = [...select.options].some(o => o.value === chosen) ? chosen : DEFAULT;
}
