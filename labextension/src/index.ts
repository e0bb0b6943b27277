// forge-jupyter's JupyterLab extension: the live turn widget's rendering module for every
// notebook on the page, and the side panel.
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { IThemeManager } from '@jupyterlab/apputils';
import { INotebookTracker } from '@jupyterlab/notebook';

import { activatePanel } from './panel';
import widget from './render/index.js';

/**
 * Where the cell widget's bootstrap (forge_jupyter/static/widget_boot.js, the only script a
 * saved notebook carries) finds the renderer. A registry symbol, not an import: the bootstrap
 * is loaded by anywidget from the widget's state, outside this bundle.
 */
export const RENDER_KEY = Symbol.for('forge-jupyter.render');

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'forge-jupyter:plugin',
  description: 'The %%forge cell widget renderer and the forge side panel.',
  autoStart: true,
  // Optional: the cell widget's renderer must be on the page in every frontend.
  optional: [INotebookTracker, IThemeManager],
  activate: (
    app: JupyterFrontEnd,
    notebooks: INotebookTracker | null,
    themes: IThemeManager | null
  ): void => {
    (globalThis as Record<symbol, unknown>)[RENDER_KEY] = widget;
    activatePanel(app, { notebooks, themes });
  }
};

export default plugin;
