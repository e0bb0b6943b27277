// A cell the kernel's notebook_run runs (forge_jupyter/notebook/cells/run.py): its outputs come
// as `cell-outputs`, whole each time, and become the cell's own outputs through JupyterLab's
// cell model — shown under the cell and saved like any cell's — with the cell shown running
// ([*]) until the last of them. And the "ask before running" mark: the cell tag
// `forge-ask-before-run`, toggled from the cell context menu (or Property Inspector's tags),
// which makes every notebook_run of the cell ask the person first.
import { JupyterFrontEnd } from '@jupyterlab/application';
import type { ICodeCellModel } from '@jupyterlab/cells';
import type * as nbformat from '@jupyterlab/nbformat';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';

import type { CellOutputs } from '../protocol.generated';

export const ASK_TAG = 'forge-ask-before-run'; // forge_jupyter/tools/notebook_run.py's ASK_TAG
export const ASK_COMMAND = 'forge-jupyter:ask-before-run';

/** Make `msg.outputs` the outputs of its cell in `nb` (a cell gone or not code: nothing). */
export function applyOutputs(nb: NotebookPanel, msg: CellOutputs): void {
  const model = nb.content.model;
  if (!model) {
    return;
  }
  for (let i = 0; i < model.cells.length; i++) {
    const cell = model.cells.get(i);
    if (cell.id !== msg.cell_id || cell.type !== 'code') {
      continue;
    }
    const code = cell as ICodeCellModel;
    // not inside a shared-model transaction: outputs added in one did not show (JupyterLab 4.6)
    code.outputs.clear();
    for (const output of msg.outputs) {
      try {
        code.outputs.add(output as unknown as nbformat.IOutput);
      } catch (err) {
        console.warn('forge: an output of a cell run was not shown', err);
      }
    }
    code.executionState = msg.running ? 'running' : 'idle';
    return;
  }
}

function tagsOf(cell: { getMetadata(key: string): unknown }): string[] {
  const tags = cell.getMetadata('tags');
  return Array.isArray(tags) ? tags.filter((t): t is string => typeof t === 'string') : [];
}

/** The cell context menu's "Ask Before Forge Runs This Cell" (a check mark while tagged). */
export function addAskBeforeRun(app: JupyterFrontEnd, tracker: INotebookTracker, selector: string,
  rank: number): void {
  const cellOf = (args: Record<string, unknown>) => {
    if (args.menu) {
      const hit = app.contextMenuHitTest(n => n.classList.contains('jp-Cell'));
      const nb = hit ? tracker.find(p => p.content.node.contains(hit)) : undefined;
      const found = nb?.content.widgets.find(c => c.node === hit);
      if (found) {
        return found.model;
      }
    }
    return tracker.currentWidget?.content.activeCell?.model ?? null;
  };
  app.commands.addCommand(ASK_COMMAND, {
    label: 'Ask Before Forge Runs This Cell',
    caption: `Tag the cell ${ASK_TAG}: the agent asks you before each run of it`,
    isToggled: args => {
      const cell = cellOf(args);
      return !!cell && tagsOf(cell.sharedModel).includes(ASK_TAG);
    },
    isVisible: args => cellOf(args)?.type === 'code',
    execute: args => {
      const cell = cellOf(args);
      if (!cell) {
        return;
      }
      const tags = tagsOf(cell.sharedModel);
      const next = tags.includes(ASK_TAG) ? tags.filter(t => t !== ASK_TAG) : [...tags, ASK_TAG];
      if (next.length) {
        cell.sharedModel.setMetadata('tags', next);
      } else {
        cell.sharedModel.deleteMetadata('tags');
      }
    }
  });
  app.contextMenu.addItem({ command: ASK_COMMAND, args: { menu: true }, selector, rank });
}
