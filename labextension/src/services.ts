// What the plugin hands the side panel (src/panel/, its entry activatePanel) and the actions on
// cells (src/actions/): JupyterLab's services they may use, each null where the frontend has none.
import { ICommandPalette, IThemeManager } from '@jupyterlab/apputils';
import { INotebookTracker } from '@jupyterlab/notebook';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';

export interface PanelServices {
  /** The notebooks open in the app and which one is active (its kernel runs panel prompts). */
  notebooks: INotebookTracker | null;
  /** Light or dark theme (the panel's CSS follows JupyterLab's variables either way). */
  themes: IThemeManager | null;
}

export interface ActionServices {
  /** The notebooks whose cells the actions point at. */
  notebooks: INotebookTracker | null;
  /** Where the commands are listed (Fix Error with Forge, Ask Forge About This Cell). */
  palette: ICommandPalette | null;
  /** The app's renderers, where the error renderer with the Fix button is added. */
  rendermime: IRenderMimeRegistry | null;
}
