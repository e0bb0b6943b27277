// The panel's width in the right sidebar. JupyterLab has no call that sets a sidebar's width
// (jupyterlab/jupyterlab#9269): a sidebar is a child of the shell's horizontal SplitPanel,
// whose relative sizes the layout restorer saves and restores. So, the first time this browser
// opens the panel, it sets those sizes (Lumino's public SplitPanel API, as the shell does for
// its own defaults) so the panel is DEFAULT_WIDTH wide; after that the person's own width is
// the restorer's to keep. The lower bound is the panel's CSS min-width (panel.css), which the
// SplitPanel honours while dragging; the bound on the other side, the notebook's min-width
// while the panel shows, is panel.css's too.
import { SplitPanel, Widget } from '@lumino/widgets';

/** The panel's width on first open: the pickers and tool titles read whole. */
export const DEFAULT_WIDTH = 380;
/** What the notebook keeps, at least, beside the panel (mirrors panel.css). */
export const NOTEBOOK_MIN_WIDTH = 400;

const SIZED_KEY = 'forge-jupyter:panel-width-set';

/** The shell's split panel that holds the sidebar `panel` is in, and the sidebar's index. */
function splitOf(panel: Widget): [SplitPanel, number] | null {
  for (let child: Widget = panel, parent = panel.parent; parent; child = parent, parent = parent.parent) {
    if (parent instanceof SplitPanel && parent.orientation === 'horizontal') {
      return [parent, parent.widgets.indexOf(child)];
    }
  }
  return null;
}

function alreadySized(): boolean {
  try {
    return window.localStorage.getItem(SIZED_KEY) === '1';
  } catch {
    return false; // storage refused (a private window): size it each page load
  }
}

function rememberSized(): void {
  try {
    window.localStorage.setItem(SIZED_KEY, '1');
  } catch {
    // as above
  }
}

/** Once per browser, on the panel's first show: DEFAULT_WIDTH, taken from the main area and
 * never below what the notebook keeps. Call when the panel is shown and laid out. */
export function sizeOnFirstOpen(panel: Widget): void {
  if (alreadySized()) {
    return;
  }
  const found = splitOf(panel);
  if (!found) {
    return; // not in a JupyterLab sidebar (Notebook 7's own layout): its width is the host's
  }
  const [split, side] = found;
  const widths = split.widgets.map(w => (w.isVisible ? w.node.getBoundingClientRect().width : 0));
  // The main area: the widest other child (the dock panel between the sidebars).
  let main = -1;
  widths.forEach((w, i) => {
    if (i !== side && (main < 0 || w > widths[main])) {
      main = i;
    }
  });
  if (main < 0 || widths[side] <= 0) {
    return; // not laid out yet: try again at the next show
  }
  rememberSized();
  const want = Math.min(DEFAULT_WIDTH, widths[side] + widths[main] - NOTEBOOK_MIN_WIDTH);
  if (want <= widths[side]) {
    return; // already as wide, or no room to widen it
  }
  widths[main] -= want - widths[side];
  widths[side] = want;
  split.setRelativeSizes(widths);
}
