// The forge side panel's entry, called once by the plugin (../index.ts) when JupyterLab
// activates it: the panel in the right sidebar, and a command that opens it.
import { JupyterFrontEnd } from '@jupyterlab/application';

import { PanelServices } from '../services';
import { ForgePanel } from './panel';

export const OPEN_COMMAND = 'forge-jupyter:open-panel';

export function activatePanel(app: JupyterFrontEnd, services: PanelServices): ForgePanel {
  // The theme needs nothing here: panel.css uses JupyterLab's variables only.
  const panel = new ForgePanel(services.notebooks);
  app.shell.add(panel, 'right', { rank: 600 });
  app.commands.addCommand(OPEN_COMMAND, {
    label: 'Open the Forge panel',
    caption: 'Chat with forge in the active notebook’s kernel; its sessions, approvals and costs',
    execute: () => app.shell.activateById(panel.id)
  });
  return panel;
}
