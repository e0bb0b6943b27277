// Ask from where you are: two commands on the active notebook's cells — in the cell context menu
// (which also opens on an output) and the command palette — and the Fix button under an error
// (./errorOutput.ts), which runs the first. Each opens the Forge panel with the cell mentioned in
// its box, focused and not sent (./prompts.ts says what the box gets).
import { JupyterFrontEnd } from '@jupyterlab/application';
import { ICommandPalette, Notification } from '@jupyterlab/apputils';
import type { Cell, ICodeCellModel } from '@jupyterlab/cells';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import type { ReadonlyPartialJSONObject } from '@lumino/coreutils';

import { addAskBeforeRun } from '../cells/run';
import { forgeIcon } from '../panel/icon';
import type { ForgePanel } from '../panel/panel';
import { askText, fixText } from './prompts';

export const FIX_COMMAND = 'forge-jupyter:fix-error';
export const ASK_COMMAND = 'forge-jupyter:ask-about-cell';

const CELL_MENU = '.jp-Notebook .jp-Cell';
const CATEGORY = 'Forge';

const NO_NOTEBOOK = 'Open a notebook and select a cell first: forge asks about the active notebook’s cells.';
const NO_ERROR = 'This cell has no error to fix. Run it first, or use “Ask Forge About This Cell”.';
const NO_PANEL = 'The Forge panel cannot be shown here. Open it from the right sidebar '
  + '(View › Appearance › Show Right Sidebar), then try again.';
const NO_KERNEL = 'This notebook has no kernel: choose one (Kernel › Change Kernel…) before sending.';

/** A cell shows an error output (what Fix works on). */
export function hasError(cell: Cell): boolean {
  if (cell.model.type !== 'code') {
    return false;
  }
  const outputs = (cell.model as ICodeCellModel).outputs;
  for (let i = 0; i < outputs.length; i++) {
    if (outputs.get(i).type === 'error') {
      return true;
    }
  }
  return false;
}

/** A cell and its notebook, as an action finds them. */
interface ITarget {
  nb: NotebookPanel;
  cell: Cell;
}

/** The cells an Ask is about: the target's selection when the target is in it, in order. */
function askedCells({ nb, cell }: ITarget): Cell[] {
  const content = nb.content;
  if (!content.isSelectedOrActive(cell)) {
    return [cell];
  }
  return content.widgets.filter(c => content.isSelectedOrActive(c));
}

export function addCellActions(app: JupyterFrontEnd, tracker: INotebookTracker, panel: ForgePanel,
  palette: ICommandPalette | null): void {
  /** From the cell menu, the cell right-clicked (JupyterLab 4.6 does not make a code cell
   * active when its editor is right-clicked); else the active notebook's active cell. */
  const target = (args: ReadonlyPartialJSONObject): ITarget | null => {
    if (args.menu) {
      const hit = app.contextMenuHitTest(n => n.classList.contains('jp-Cell'));
      const nb = hit ? tracker.find(p => p.content.node.contains(hit)) : undefined;
      const cell = nb?.content.widgets.find(c => c.node === hit);
      if (nb && cell) {
        return { nb, cell };
      }
    }
    const nb = tracker.currentWidget;
    const cell = nb?.content.activeCell;
    return nb && cell ? { nb, cell } : null;
  };

  /** Show the panel and put `text` into its box; where it cannot be shown, say what to do. */
  const compose = (nb: NotebookPanel, text: string): void => {
    app.shell.activateById(panel.id);
    if (!panel.isVisible) {
      Notification.warning(NO_PANEL, { autoClose: 8000 });
      return;
    }
    panel.compose(nb, text, nb.sessionContext.session?.kernel ? '' : NO_KERNEL);
  };

  /** The command's text, or a notice said and null; an id forge cannot name says why. */
  const attempt = (make: () => string): string | null => {
    try {
      return make();
    } catch (err) {
      Notification.warning((err as Error).message, { autoClose: 8000 });
      return null;
    }
  };

  app.commands.addCommand(FIX_COMMAND, {
    label: 'Fix Error with Forge',
    caption: 'Open the Forge panel with this cell and its error attached, the request ready to send',
    icon: forgeIcon,
    // in the cell menu only on a cell with an error; in the palette always, saying why not
    isVisible: args => {
      const t = args.menu ? target(args) : null;
      return !args.menu || (t !== null && hasError(t.cell));
    },
    execute: args => {
      const t = target(args);
      if (!t) {
        Notification.info(NO_NOTEBOOK, { autoClose: 6000 });
        return;
      }
      if (!hasError(t.cell)) {
        Notification.info(NO_ERROR, { autoClose: 6000 });
        return;
      }
      const text = attempt(() => fixText(t.cell.model.id));
      if (text !== null) {
        compose(t.nb, text);
      }
    }
  });

  app.commands.addCommand(ASK_COMMAND, {
    label: args => {
      const t = target(args);
      return t && askedCells(t).length > 1 ? 'Ask Forge About the Selected Cells' : 'Ask Forge About This Cell';
    },
    caption: 'Open the Forge panel with this cell (its source and outputs) attached, to write your question',
    icon: forgeIcon,
    execute: args => {
      const t = target(args);
      if (!t) {
        Notification.info(NO_NOTEBOOK, { autoClose: 6000 });
        return;
      }
      const text = attempt(() => askText(askedCells(t).map(c => c.model.id), panel.draft));
      if (text !== null) {
        compose(t.nb, text);
      }
    }
  });

  // A group of their own after JupyterLab's cell items (Cut … Clear Cell Output, ranks 0–12)
  // and before its notebook items (a separator at 20): JupyterLab sorts its menu by rank alone.
  app.contextMenu.addItem({ type: 'separator', selector: CELL_MENU, rank: 13 });
  app.contextMenu.addItem({ command: FIX_COMMAND, args: { menu: true }, selector: CELL_MENU, rank: 13.1 });
  app.contextMenu.addItem({ command: ASK_COMMAND, args: { menu: true }, selector: CELL_MENU, rank: 13.2 });
  addAskBeforeRun(app, tracker, CELL_MENU, 13.3);
  if (palette) {
    palette.addItem({ command: FIX_COMMAND, category: CATEGORY });
    palette.addItem({ command: ASK_COMMAND, category: CATEGORY });
  }
}

/** The Fix button under an error output: that cell made the active one, then Fix. */
export function fixFromOutput(app: JupyterFrontEnd, tracker: INotebookTracker, node: HTMLElement): void {
  const cellNode = node.closest('.jp-Cell');
  const nb = cellNode ? tracker.find(p => p.content.node.contains(cellNode)) : undefined;
  const index = nb ? nb.content.widgets.findIndex(c => c.node === cellNode) : -1;
  if (!nb || index < 0) {
    return; // not a notebook's cell: the bar is not shown there
  }
  if (tracker.currentWidget !== nb) {
    app.shell.activateById(nb.id);
  }
  nb.content.deselectAll();
  nb.content.activeCellIndex = index;
  void app.commands.execute(FIX_COMMAND);
}
