// forge_jupyter's live turn widget: the render entry of the one rendering module, used three
// ways: the labextension puts it on globalThis (src/index.ts), the standalone anywidget ESM
// forge_jupyter/static/widget.js is bundled from it (build.mjs), and the bootstrap that a
// saved notebook carries (forge_jupyter/static/widget_boot.js) delegates to either.
// Protocol (declared in forge_jupyter/notebook/ops.py, typed in ../protocol.generated.ts): the
// view says {type: "ready"} when it renders and gets a snapshot; then batches of ops arrive, at
// most ~30 a second. Buttons send {type: "approve", request_id, answer, reason},
// {type: "answer", request_id, text} (the question tool's card) and {type: "stop"}.
// The styles are widget.css: the labextension's style/ imports it, esbuild bundles it apart.
import { PROTOCOL, type WidgetMessage } from "../protocol.generated.js";
import { type Host, TurnView } from "./view.js";

// The kernel ↔ view protocol this module speaks; the bootstrap delegates only to a match.
export { PROTOCOL };

/** The part of an anywidget model the view uses. */
export interface WidgetModel extends Host {
  on(event: "msg:custom", handler: (msg: WidgetMessage) => void): void;
  off(event: "msg:custom", handler: (msg: WidgetMessage) => void): void;
}

export default {
  protocol: PROTOCOL,
  render({ model, el }: { model: WidgetModel; el: HTMLElement }): () => void {
    const view = new TurnView(el, model);
    const onMessage = (msg: WidgetMessage): void => view.onMessage(msg);
    model.on("msg:custom", onMessage);
    model.send({ type: "ready", protocol: PROTOCOL });
    return () => {
      model.off("msg:custom", onMessage);
      view.dispose();
    };
  },
};
