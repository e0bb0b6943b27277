// The actions on cells' entry, called once by the plugin (../index.ts) after the panel is
// made: the Fix button under errors (a rendermime renderer), the two cell commands, and
// "Revert to here".
import { JupyterFrontEnd } from '@jupyterlab/application';

import type { ForgePanel } from '../panel/panel';
import { ActionServices } from '../services';
import { addCellActions, fixFromOutput } from './commands';
import { ERROR_RANK, errorRendererFactory, STDERR_MIME } from './errorOutput';
import { activateRevert } from './revert';

export function activateActions(app: JupyterFrontEnd, panel: ForgePanel, services: ActionServices): void {
  const { notebooks, palette, rendermime } = services;
  if (!notebooks) {
    return; // no notebooks in this frontend: nothing to point at
  }
  addCellActions(app, notebooks, panel, palette);
  activateRevert(notebooks, panel); // "Revert to here" on turns and %%forge records
  // Notebooks clone the app's registry when they open, after the plugins are activated: every
  // notebook of the page gets the renderer.
  rendermime?.addFactory(errorRendererFactory(() => rendermime.getFactory(STDERR_MIME),
    node => fixFromOutput(app, notebooks, node)), ERROR_RANK);
}
