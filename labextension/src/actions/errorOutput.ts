// "Fix with Forge" under a notebook cell's error. JupyterLab has no toolbar on outputs, but it
// draws an error through rendermime: the output's bundle holds the traceback as
// `application/vnd.jupyter.stderr` (JupyterLab's error renderer, rank 110) and the error itself
// as `application/vnd.jupyter.error`, which no renderer of JupyterLab's claims. A renderer for
// that type, ranked first, draws the traceback with JupyterLab's own stderr renderer and a bar
// under it. Only error outputs carry that type (stderr streams do not), nothing is written into
// the output (the saved notebook is what it was), and without this extension JupyterLab draws
// the error as always.
import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import type { Message } from '@lumino/messaging';
import { Panel } from '@lumino/widgets';

import { forgeIcon } from '../panel/icon';
import { h } from '../render/dom.js';
import { NOT_FIXABLE } from './prompts';

export const ERROR_MIME = 'application/vnd.jupyter.error';
export const STDERR_MIME = 'application/vnd.jupyter.stderr';
/** Before JupyterLab's stderr renderer (110), after every rich type (HTML is 50). */
export const ERROR_RANK = 100;

export const FIX_LABEL = 'Fix with Forge';

/** Where an error renderer finds JupyterLab's own traceback renderer (the app's registry). */
type StderrFactory = () => IRenderMime.IRendererFactory | undefined;

class ErrorOutput extends Panel implements IRenderMime.IRenderer {
  constructor(private readonly inner: IRenderMime.IRenderer, onFix: (node: HTMLElement) => void) {
    super();
    this.addClass('forge-error-output');
    this.addWidget(inner);
    // The label is drawn by CSS from data-label, so it is no text of the output: copying the
    // output, searching the notebook or reading its text gives the traceback alone. The
    // button's accessible name is its aria-label.
    const button = h('button', {
      type: 'button', class: 'forge-fix-button', 'data-testid': 'fix-with-forge',
      'aria-label': FIX_LABEL, 'data-label': FIX_LABEL,
      title: 'Open the Forge panel with this cell and its error attached, ready to send',
      onclick: () => onFix(this.node)
    });
    button.prepend(forgeIcon.element({ tag: 'span', className: 'forge-fix-icon' }));
    this.bar = h('div', { class: 'forge-error-actions', hidden: true }, button);
    this.node.append(this.bar);
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    await this.inner.renderModel(model);
    const error = model.data[ERROR_MIME] as { ename?: unknown } | undefined;
    this.fixable = !NOT_FIXABLE.has(String(error?.ename ?? ''));
    this.showBar();
  }

  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    this.showBar();
  }

  /** Only under a notebook's cell: a console's error, or an output opened in a view of its
   * own, has no cell for the panel to point at. */
  private showBar(): void {
    this.bar.hidden = !(this.fixable && this.node.closest('.jp-Notebook .jp-Cell'));
  }

  private readonly bar: HTMLElement;
  private fixable = false;
}

/** The renderer factory, to add to the app's rendermime registry at ERROR_RANK. */
export function errorRendererFactory(stderr: StderrFactory, onFix: (node: HTMLElement) => void)
  : IRenderMime.IRendererFactory {
  return {
    safe: true, // what it draws is JupyterLab's stderr renderer's (safe) and a button
    mimeTypes: [ERROR_MIME],
    defaultRank: ERROR_RANK,
    createRenderer: options => {
      const factory = stderr();
      if (!factory) {
        throw new Error('forge: JupyterLab has no renderer for application/vnd.jupyter.stderr');
      }
      return new ErrorOutput(factory.createRenderer({ ...options, mimeType: STDERR_MIME }), onFix);
    }
  };
}
