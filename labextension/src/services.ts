// What the plugin hands the side panel (src/panel/, its entry activatePanel): JupyterLab's
// services the panel may use, each null where the frontend has none.
import { IThemeManager } from '@jupyterlab/apputils';
import { INotebookTracker } from '@jupyterlab/notebook';

export interface PanelServices {
  /** The notebooks open in the app and which one is active (its kernel runs panel prompts). */
  notebooks: INotebookTracker | null;
  /** Light or dark theme (the panel's CSS follows JupyterLab's variables either way). */
  themes: IThemeManager | null;
}
