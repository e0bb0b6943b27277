// forge-jupyter's JupyterLab extension: the live turn widget's rendering module for every
// notebook on the page, and the side panel.
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';

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
  activate: (app: JupyterFrontEnd): void => {
    (globalThis as Record<symbol, unknown>)[RENDER_KEY] = widget;
    activatePanel(app);
  }
};

export default plugin;
