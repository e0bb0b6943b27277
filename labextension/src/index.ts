// forge-jupyter's JupyterLab extension: the live turn widget's rendering module for every
// notebook on the page, the side panel, and the actions on cells that open it (Fix with Forge).
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ICommandPalette, IThemeManager } from '@jupyterlab/apputils';
import { IEditorLanguageRegistry, jupyterHighlightStyle } from '@jupyterlab/codemirror';
import { INotebookTracker } from '@jupyterlab/notebook';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';

import { activateActions } from './actions';
import { activatePanel } from './panel';
import { setHighlighter } from './render/code.js';
import { CellOutput, setCellInserter } from './render/keep.js';
import widget from './render/index.js';

/**
 * Where the cell widget's bootstrap (forge_jupyter/static/widget_boot.js, the only script a
 * saved notebook carries) finds the renderer. A registry symbol, not an import: the bootstrap
 * is loaded by anywidget from the widget's state, outside this bundle.
 */
export const RENDER_KEY = Symbol.for('forge-jupyter.render');

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'forge-jupyter:plugin',
  description: 'The %%forge cell widget renderer, the forge side panel and the actions on cells.',
  autoStart: true,
  // Optional: the cell widget's renderer must be on the page in every frontend.
  optional: [INotebookTracker, IThemeManager, IEditorLanguageRegistry, ICommandPalette, IRenderMimeRegistry],
  activate: (
    app: JupyterFrontEnd,
    notebooks: INotebookTracker | null,
    themes: IThemeManager | null,
    languages: IEditorLanguageRegistry | null,
    palette: ICommandPalette | null,
    rendermime: IRenderMimeRegistry | null
  ): void => {
    if (languages) {
      installHighlighter(languages);
    }
    (globalThis as Record<symbol, unknown>)[RENDER_KEY] = widget;
    if (notebooks) {
      setCellInserter((from, source, outputs) => insertAsCell(notebooks, from, source, outputs));
    }
    const panel = activatePanel(app, { notebooks, themes });
    activateActions(app, panel, { notebooks, palette, rendermime });
  }
};

/**
 * A call's code in the widget and the panel is highlighted as JupyterLab highlights a Markdown
 * code block: the editor's language registry and highlight style, whose rules an editor on the
 * page mounts — mounted here too, for a page with none open yet.
 */
function installHighlighter(languages: IEditorLanguageRegistry): void {
  const rules = jupyterHighlightStyle.module?.getRules();
  if (rules) {
    const style = document.createElement('style');
    style.dataset.forge = 'highlight';
    style.textContent = rules;
    document.head.append(style);
  }
  setHighlighter((code, language, el) => {
    const spec = (language.path ? languages.findByFileName(language.path) : null)
      ?? (language.language ? languages.findBest(language.language) : null);
    return languages.highlight(code, spec, el);
  });
}

/**
 * "Insert as cell" (render/keep.ts): a code cell after the active cell of the notebook the
 * button is in (a %%forge cell's widget), else of the current notebook (the side panel follows
 * it), through JupyterLab's model — an ordinary cell, in the undo history, saved as any edit.
 */
function insertAsCell(notebooks: INotebookTracker, from: HTMLElement, source: string,
                      outputs: CellOutput[]): boolean {
  const nb = notebooks.find(w => w.node.contains(from)) ?? notebooks.currentWidget;
  const model = nb?.content.model;
  if (!nb || !model || model.readOnly) {
    return false;
  }
  const active = nb.content.activeCellIndex;
  const at = active >= 0 && active < model.cells.length ? active + 1 : model.cells.length;
  model.sharedModel.transact(() => {
    model.sharedModel.insertCell(at, { cell_type: 'code', source, outputs, metadata: {} } as never);
  });
  nb.content.activeCellIndex = at;
  return true;
}

export default plugin;
