// forge_jupyter's live turn widget: an anywidget ESM front end.
// Protocol (see forge_jupyter/notebook/widget.py): the view says {type: "ready"} when it renders
// and gets a snapshot; then batches of ops arrive, at most ~30 a second. Buttons send
// {type: "approve", request_id, answer, reason} and {type: "stop"}.
import "./widget.css";
import { TurnView } from "./view.js";

export default {
  render({ model, el }) {
    const view = new TurnView(el, model);
    const onMessage = (msg) => view.onMessage(msg);
    model.on("msg:custom", onMessage);
    model.send({ type: "ready", protocol: 1 });
    return () => {
      model.off("msg:custom", onMessage);
      view.dispose();
    };
  },
};
