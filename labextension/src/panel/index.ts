// PLACEHOLDER — helper D replaces this file (and writes the rest of src/panel/**): it is the
// entry point of the forge side panel, called once by the plugin in ../index.ts when
// JupyterLab activates it. It exists now only so the extension builds before the panel does.
import { JupyterFrontEnd } from '@jupyterlab/application';

import { PanelServices } from '../services';

export function activatePanel(app: JupyterFrontEnd, services: PanelServices): void {
  void app; // the panel is not written yet
  void services;
}
