// PLACEHOLDER — helper D replaces this file (and writes the rest of src/panel/**): it is the
// entry point of the forge side panel, called once by the plugin in ../index.ts when
// JupyterLab activates it. It exists now only so the extension builds before the panel does.
import { JupyterFrontEnd } from '@jupyterlab/application';

export function activatePanel(app: JupyterFrontEnd): void {
  void app; // the panel is not written yet
}
