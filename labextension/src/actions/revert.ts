// "Revert to here" (forge_jupyter/session/revert.py) from the page: the button on a turn in the
// side panel and in a live view (../render/revert.ts), and one this module adds to the header of
// each %%forge cell's finished record. A click asks the person what to take back — the code
// (the files and cells the turn and the later ones changed), the conversation (continue from
// before the turn, in a fork), or both — then runs `%forge revert` in the notebook's kernel, the
// way the prompt box runs prompts, and shows what it said was restored and what was not.
import { Dialog, showDialog } from '@jupyterlab/apputils';
import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { Widget } from '@lumino/widgets';

import type { ForgePanel } from '../panel/panel';
import { h } from '../render/dom.js';
import { RevertTarget, isForgeControl, revertButton, revertLine, setTurnReverter } from '../render/revert.js';

const CHOICES: [string, 'code' | 'conversation' | 'both'][] = [
  ['Code', 'code'], ['Conversation', 'conversation'], ['Code and conversation', 'both']];

function explain(): HTMLElement {
  return h('div', { class: 'forge-revert-ask' },
    h('p', {}, 'Take back what this turn and the later ones did:'),
    h('ul', {},
      h('li', {}, h('strong', {}, 'Code'), ': the files and cells they changed go back to how they were. ' +
        'A file or cell you changed since is left as it is, and named.'),
      h('li', {}, h('strong', {}, 'Conversation'), ': the notebook continues from before this turn, ' +
        'in a fork of the session (the old one is kept).')),
    h('p', {}, 'Kernel variables are never restored: re-run the cells that make them.'));
}

async function revert(panel: ForgePanel, nb: NotebookPanel, target: RevertTarget): Promise<void> {
  const asked = await showDialog({
    title: 'Revert to here',
    body: new Widget({ node: explain() }),
    buttons: [Dialog.cancelButton(), ...CHOICES.map(([label]) => Dialog.okButton({ label }))]
  });
  const mode = asked.button.accept ? CHOICES.find(([label]) => label === asked.button.label)?.[1] : undefined;
  const line = mode ? revertLine(target, mode) : null;
  if (!line) {
    return;
  }
  let said: string;
  try {
    said = await panel.runLine(nb, line);
  } catch (err) {
    said = (err as Error).message;
  }
  await showDialog({
    title: 'Reverted',
    body: new Widget({ node: h('pre', { class: 'forge-revert-result', 'data-testid': 'revert-result' },
      said.trim() || 'Nothing was said.') }),
    buttons: [Dialog.okButton({ label: 'OK' })]
  });
}

/** A "Revert to here" on each %%forge record in `nb` (added as records appear). */
function decorate(nb: NotebookPanel): void {
  const add = (): void => {
    for (const header of nb.content.node.querySelectorAll<HTMLElement>('.forge-record > .forge-header')) {
      if ([...header.children].some(isForgeControl)) {
        continue; // ours already (a look-alike in the record's own markup does not count)
      }
      const cell = header.closest<HTMLElement>('.jp-Cell');
      const widget = nb.content.widgets.find(c => c.node === cell);
      if (widget) {
        header.append(revertButton(() => ({ cell_id: widget.model.id })));
      }
    }
  };
  let frame = 0;
  const observer = new MutationObserver(() => {
    if (!frame) {
      frame = requestAnimationFrame(() => {
        frame = 0;
        add();
      });
    }
  });
  observer.observe(nb.content.node, { childList: true, subtree: true });
  nb.disposed.connect(() => observer.disconnect());
  add();
}

export function activateRevert(notebooks: INotebookTracker, panel: ForgePanel): void {
  setTurnReverter((from, target) => {
    // the notebook the button is in (a cell's record or view), else the one the panel follows
    const nb = notebooks.find(w => w.node.contains(from)) ?? panel.followed ?? notebooks.currentWidget;
    if (nb) {
      void revert(panel, nb, target);
    }
  });
  notebooks.widgetAdded.connect((_, nb) => decorate(nb));
  notebooks.forEach(decorate);
}
