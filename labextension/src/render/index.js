// forge_jupyter's live turn widget: the render entry of the one rendering module, used three
// ways: the labextension puts it on globalThis (src/index.ts), the standalone anywidget ESM
// forge_jupyter/static/widget.js is bundled from it (build.mjs), and the bootstrap that a
// saved notebook carries (forge_jupyter/static/widget_boot.js) delegates to either.
// Protocol (see forge_jupyter/notebook/widget.py): the view says {type: "ready"} when it renders
// and gets a snapshot; then batches of ops arrive, at most ~30 a second. Buttons send
// {type: "approve", request_id, answer, reason}, {type: "answer", request_id, text} (the question
// tool's card) and {type: "stop"}.
// The styles are widget.css: the labextension's style/ imports it, esbuild bundles it apart.
import { TurnView } from "./view.js";

// The kernel ↔ view protocol this module speaks; the bootstrap delegates only to a match.
export const PROTOCOL = 1;

export default {
  protocol: PROTOCOL,
  render({ model, el }) {
    const view = new TurnView(el, model);
    const onMessage = (msg) => view.onMessage(msg);
    model.on("msg:custom", onMessage);
    model.send({ type: "ready", protocol: PROTOCOL });
    return () => {
      model.off("msg:custom", onMessage);
      view.dispose();
    };
  },
};
